#pragma once
// main() for GUI test suites: VTK's OpenGL format must be the default before QApplication
// exists, which QTEST_MAIN does not allow. Settings and application data (recent files, the
// autosave) go to a folder of the run's own, so that a suite never touches the user's, and two
// checkouts testing at once do not share them.

#include "widgets/SanitizerSupport.h"
#include "widgets/VtkViewport.h"

#include <QApplication>
#include <QSurfaceFormat>
#include <QTemporaryDir>
#include <QTest>

#define PBDLAB_GUI_TEST_MAIN(TestClass)                                                            \
    int main(int argc, char** argv) {                                                              \
        pbd::keepGlDriverLoadedForLeakChecks();                                                    \
        QTemporaryDir home;                                                                        \
        qputenv("XDG_CONFIG_HOME", (home.path() + "/config").toUtf8());                            \
        qputenv("XDG_DATA_HOME", (home.path() + "/data").toUtf8());                                \
        QSurfaceFormat::setDefaultFormat(pbd::VtkViewport::surfaceFormat());                       \
        QApplication app(argc, argv);                                                              \
        TestClass test;                                                                            \
        return QTest::qExec(&test, argc, argv);                                                    \
    }
