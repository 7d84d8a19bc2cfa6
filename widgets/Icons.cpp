#include "widgets/Icons.h"

namespace pbd {

void useIconTheme() {
    if (QIcon::themeName().isEmpty() ||
        (!QIcon::hasThemeIcon(QStringLiteral("document-open")) &&
         !QIcon::hasThemeIcon(QStringLiteral("document-open-symbolic")))) {
        QIcon::setThemeName(QStringLiteral("Adwaita"));
    }
    QIcon::setFallbackThemeName(QStringLiteral("hicolor"));
}

QIcon themeIcon(const QString& name) {
    QIcon icon = QIcon::fromTheme(name + QStringLiteral("-symbolic"));
    return icon.isNull() ? QIcon::fromTheme(name) : icon;
}

QIcon ownIcon(const QString& name) {
    return QIcon(QStringLiteral(":/icons/%1.svg").arg(name));
}

} // namespace pbd
