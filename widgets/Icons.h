#pragma once
// Icons: the freedesktop icon theme's for what the theme names (open, save, play...), PBD Lab's
// own SVGs (resources/icons, compiled into pbdlab) for what a theme lacks (the air mesh, pins,
// constraints, the ground) and for the application.

#include <QIcon>
#include <QString>

namespace pbd {

// Without a desktop session (a bare X server, xvfb) Qt names no icon theme: Adwaita then
// (Debian's adwaita-icon-theme, installed by scripts/setup), so the toolbar has its icons.
void useIconTheme();
// The theme's symbolic icon `name`-symbolic (one dark colour, as PBD Lab's own), else its
// full-colour `name` (Adwaita's legacy ones are pale grey); a null icon when it has neither.
QIcon themeIcon(const QString& name);
// One of PBD Lab's own icons, resources/icons/<name>.svg.
QIcon ownIcon(const QString& name);

} // namespace pbd
