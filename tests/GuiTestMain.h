#pragma once
// main() for GUI test suites: VTK's OpenGL format must be the default before QApplication
// exists, which QTEST_MAIN does not allow.

#include "widgets/VtkViewport.h"

#include <QApplication>
#include <QSurfaceFormat>
#include <QTest>

#define PBDLAB_GUI_TEST_MAIN(TestClass)                                                            \
    int main(int argc, char** argv) {                                                              \
        QSurfaceFormat::setDefaultFormat(pbd::VtkViewport::surfaceFormat());                       \
        QApplication app(argc, argv);                                                              \
        TestClass test;                                                                            \
        return QTest::qExec(&test, argc, argv);                                                    \
    }
