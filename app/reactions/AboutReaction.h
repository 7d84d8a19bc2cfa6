#pragma once
// Help ▸ About PBD Lab: the version, the licence and every library PBD Lab is built with.

#include <QObject>
#include <QStringList>

class QAction;

namespace pbd {

struct Workbench;

class AboutReaction : public QObject {
    Q_OBJECT
public:
    AboutReaction(Workbench& bench, QObject* parent);
    QAction* action() const { return action_; }
    // Versions of PBD Lab and every library it is built with, one "name version" per entry.
    static QStringList libraryVersions();

private:
    QAction* action_ = nullptr;
};

} // namespace pbd
