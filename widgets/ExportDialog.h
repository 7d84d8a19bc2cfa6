#pragma once
// File ▸ Export: the format (cooked asset, project, .vtu, .msh, TetGen files), the file, the
// state to write (the authored scene Reset returns to, or the current simulated shape) and,
// for JSON, whether to indent it. The choices (not the file) are remembered.

#include <QDialog>
#include <QString>

class QButtonGroup;
class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace pbd {

enum class ExportFormat { CookedAsset, Project, Vtu, Msh, Tetgen };
inline constexpr int kExportFormatCount = 5;

struct ExportChoice {
    ExportFormat format = ExportFormat::CookedAsset;
    QString path;
    bool currentState = false; // the simulated shape instead of the authored scene
    bool indented = false;     // JSON formats: one value per line, for diffs and reading
};

// The file suffix a format writes ("asset.json", "json", "vtu", "msh", "node").
QString exportSuffix(ExportFormat format);

class ExportDialog : public QDialog {
    Q_OBJECT
public:
    // `baseName` is the scene's name, in `directory`.
    ExportDialog(const QString& directory, const QString& baseName, const ExportChoice& initial,
                 QWidget* parent = nullptr);

    ExportChoice choice() const;

    // The last choice (format, state, indent; no path) from QSettings, and storing it.
    static ExportChoice loadChoice();
    static void saveChoice(const ExportChoice& choice);

private:
    void formatChanged();
    void browse();

    QComboBox* format_;
    QLineEdit* path_;
    QButtonGroup* state_;
    QCheckBox* indented_;
    QLabel* description_;
    QPushButton* ok_;
};

} // namespace pbd
