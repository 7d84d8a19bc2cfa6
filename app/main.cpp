// pbdlab: the PBD Lab desktop application.
//   pbdlab                         opens the window on the sample scene
//   pbdlab --scene NAME | FILE     opens a generated scene or a mesh file
//   pbdlab --scene NAME --screenshot out.png [--size WxH] [--steps N] [--field NAME]
//   pbdlab --scene NAME --steps N --frames DIR [--frame-every K] [--size WxH]
//                                  renders, writes the PNG and exits (0 on success)
//   pbdlab --scene NAME --bench-view SECONDS [--size WxH] [--moving-resolution SCALE]
//                                  plays while the view turns; prints frame rate and timings

#include "app/MainWindow.h"
#include "app/ViewBench.h"
#include "app/reactions/OpenReaction.h"
#include "core/base/InstructionSets.h"
#include "core/base/Version.h"
#include "core/scenes/SceneLibrary.h"
#include "meshing/AirScenes.h"
#include "widgets/SanitizerSupport.h"
#include "widgets/VtkViewport.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDeadlineTimer>
#include <QDir>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSurfaceFormat>
#include <QTimer>

#include <algorithm>
#include <cstdio>

namespace {

void printError(const QString& message) {
    std::fprintf(stderr, "pbdlab: %s\n", qPrintable(message));
}

bool parseSize(const QString& text, QSize& size) {
    const QRegularExpressionMatch m =
        QRegularExpression(QStringLiteral("^(\\d{1,5})[xX](\\d{1,5})$")).match(text);
    if (!m.hasMatch()) {
        return false;
    }
    size = QSize(m.captured(1).toInt(), m.captured(2).toInt());
    return size.width() >= 1 && size.height() >= 1 && size.width() <= 16384 &&
           size.height() <= 16384;
}

// Waits (up to 20 s) until the window's view has its OpenGL context; false, with a message,
// when it does not get one.
bool waitForRendering(pbd::MainWindow& window) {
    QDeadlineTimer ready(20000);
    while (!window.viewport()->isValid() && !ready.hasExpired()) {
        QApplication::processEvents(QEventLoop::AllEvents, 50);
    }
    if (!window.viewport()->isValid()) {
        printError(QStringLiteral(
            "cannot render: no OpenGL context (is there an X display? try xvfb-run -a)"));
        return false;
    }
    return true;
}

} // namespace

int main(int argc, char** argv) {
    pbd::keepGlDriverLoadedForLeakChecks(); // sanitizer builds only
    if (const std::string problem = pbd::isa::environmentProblem(); !problem.empty()) {
        std::fprintf(stderr, "pbdlab: warning: %s\n", problem.c_str());
    }
    QSurfaceFormat::setDefaultFormat(pbd::VtkViewport::surfaceFormat());
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("PBD Lab"));
    QApplication::setApplicationName(QStringLiteral("pbdlab"));
    QApplication::setApplicationVersion(QString::fromLatin1(pbd::kVersion));
    QGuiApplication::setDesktopFileName(QStringLiteral("pbdlab"));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("PBD Lab: author and debug position-based simulation assets."));
    parser.addHelpOption();
    parser.addVersionOption();
    QStringList sceneNames;
    for (const pbd::SceneInfo& info : pbd::allScenes()) {
        sceneNames << QString::fromStdString(info.name);
    }
    const QCommandLineOption sceneOption(
        QStringLiteral("scene"),
        QStringLiteral("Open a generated scene (%1).").arg(sceneNames.join(QStringLiteral(", "))),
        QStringLiteral("name"));
    const QCommandLineOption openOption(
        QStringLiteral("open"),
        QStringLiteral("Open a mesh file (.obj, .ply, .stl, .off, .gltf, .glb)."),
        QStringLiteral("file"));
    const QCommandLineOption screenshotOption(
        QStringLiteral("screenshot"), QStringLiteral("Render the view to a PNG file and exit."),
        QStringLiteral("file"));
    const QCommandLineOption sizeOption(
        QStringLiteral("size"), QStringLiteral("Screenshot size in pixels (default 1280x800)."),
        QStringLiteral("WxH"), QStringLiteral("1280x800"));
    const QCommandLineOption stepsOption(
        QStringLiteral("steps"),
        QStringLiteral("Simulate this many steps before the screenshot (default 0)."),
        QStringLiteral("N"), QStringLiteral("0"));
    const QCommandLineOption fieldOption(
        QStringLiteral("field"),
        QStringLiteral("Colour the surfaces by a field (none, strain_u, strain_v, strain_w, shear, "
                       "max_stretch, min_stretch, volume_ratio)."),
        QStringLiteral("name"));
    const QCommandLineOption framesOption(
        QStringLiteral("frames"),
        QStringLiteral("With --steps: write a PNG of the view every --frame-every steps into this "
                       "folder (frame_NNNNNN.png), then exit."),
        QStringLiteral("folder"));
    const QCommandLineOption frameEveryOption(QStringLiteral("frame-every"),
                                              QStringLiteral("Steps between frames (default 1)."),
                                              QStringLiteral("K"), QStringLiteral("1"));
    const QCommandLineOption benchViewOption(
        QStringLiteral("bench-view"),
        QStringLiteral("Play the scene for this many seconds while the view turns (the window "
                       "--size big), then print the frames per second, each frame's render "
                       "and each snapshot's VTK update (ms) as JSON and exit."),
        QStringLiteral("seconds"));
    const QCommandLineOption movingOption(
        QStringLiteral("moving-resolution"),
        QStringLiteral("While the camera moves, draw a view slower than 30 frames per second at "
                       "this scale of its size (1: full size; default: the preference, 0.5)."),
        QStringLiteral("scale"));
    parser.addOptions({sceneOption, openOption, screenshotOption, sizeOption, stepsOption,
                       fieldOption, framesOption, frameEveryOption, benchViewOption, movingOption});
    // As a desktop opens a file with its application (pbdlab.desktop: Exec=pbdlab %f).
    parser.addPositionalArgument(QStringLiteral("file"),
                                 QStringLiteral("A mesh or project to open (as --open)."),
                                 QStringLiteral("[file]"));
    parser.process(app);

    if (parser.isSet(sceneOption) && parser.isSet(openOption)) {
        printError(QStringLiteral("--scene and --open cannot be used together"));
        return 2;
    }
    QSize size;
    if (!parseSize(parser.value(sizeOption), size)) {
        printError(QStringLiteral("invalid --size '%1': expected WxH, for example 1280x800")
                       .arg(parser.value(sizeOption)));
        return 2;
    }
    bool stepsOk = false;
    const int steps = parser.value(stepsOption).toInt(&stepsOk);
    if (!stepsOk || steps < 0) {
        printError(QStringLiteral("invalid --steps '%1': expected a whole number of steps")
                       .arg(parser.value(stepsOption)));
        return 2;
    }
    const QStringList files = parser.positionalArguments();
    if (files.size() > 1) {
        printError(QStringLiteral("unexpected argument '%1': one file at a time (see --help)")
                       .arg(files[1]));
        return 2;
    }
    if (!files.isEmpty() && (parser.isSet(openOption) || parser.isSet(sceneOption))) {
        printError(QStringLiteral("a file '%1' and --%2 cannot be used together")
                       .arg(files.front(), parser.isSet(openOption) ? QStringLiteral("open")
                                                                    : QStringLiteral("scene")));
        return 2;
    }
    const QString fileToOpen = files.isEmpty() ? parser.value(openOption) : files.front();

    bool everyOk = false;
    const int frameEvery = parser.value(frameEveryOption).toInt(&everyOk);
    if (!everyOk || frameEvery < 1) {
        printError(QStringLiteral("invalid --frame-every '%1': expected a positive number of steps")
                       .arg(parser.value(frameEveryOption)));
        return 2;
    }
    const bool frames = parser.isSet(framesOption);
    double benchSeconds = 0;
    if (parser.isSet(benchViewOption)) {
        bool ok = false;
        benchSeconds = parser.value(benchViewOption).toDouble(&ok);
        if (!ok || !(benchSeconds > 0) || benchSeconds > 3600) {
            printError(QStringLiteral("invalid --bench-view '%1': expected seconds (0 to 3600)")
                           .arg(parser.value(benchViewOption)));
            return 2;
        }
        if (frames || parser.isSet(screenshotOption)) {
            printError(QStringLiteral("--bench-view cannot be used with --screenshot or --frames"));
            return 2;
        }
    }
    const bool batch = parser.isSet(screenshotOption) || frames || benchSeconds > 0;
    pbd::MainWindow window(/*persistSettings=*/!batch);
    QString error;
    bool loaded = true;
    if (!fileToOpen.isEmpty()) {
        loaded = window.openFile(fileToOpen, &error);
    } else {
        loaded = window.loadGeneratedScene(
            parser.isSet(sceneOption) ? parser.value(sceneOption)
                                      : QString::fromStdString(pbd::allScenes().front().name),
            &error);
    }
    if (!loaded && batch) {
        printError(error);
        return 2;
    }
    if (!loaded) {
        printError(error); // the window stays open, with the message in its Log
    }

    if (parser.isSet(fieldOption) && !window.setField(parser.value(fieldOption), &error)) {
        printError(error);
        return 2;
    }
    if (parser.isSet(movingOption)) {
        bool ok = false;
        const double scale = parser.value(movingOption).toDouble(&ok);
        if (!ok || !(scale >= 0.1 && scale <= 1)) {
            printError(QStringLiteral("invalid --moving-resolution '%1': expected a scale from "
                                      "0.1 to 1")
                           .arg(parser.value(movingOption)));
            return 2;
        }
        window.viewport()->setMovingResolution(scale);
    }
    if (benchSeconds > 0) {
        window.resize(size);
    }
    window.show();
    if (benchSeconds > 0) {
        if (!waitForRendering(window)) {
            return 4;
        }
        window.viewport()->resetCamera();
        if (steps > 0 && !window.simulateSteps(steps, &error)) {
            printError(error);
            return 1;
        }
        const QJsonObject figures = pbd::benchView(window, benchSeconds);
        std::printf("%s", QJsonDocument(figures).toJson(QJsonDocument::Indented).constData());
        return 0;
    }
    if (frames) {
        // Frame sequence: the view needs its OpenGL context, then step and write in turns.
        if (!waitForRendering(window)) {
            return 4;
        }
        // Framed now that the view has its size (the scene loaded before the window showed).
        window.viewport()->resetCamera();
        const QDir folder(parser.value(framesOption));
        if (!folder.exists() && !QDir().mkpath(folder.path())) {
            printError(QStringLiteral("cannot create the folder '%1'").arg(folder.path()));
            return 3;
        }
        for (int done = 0; done < steps;) {
            const int chunk = std::min(frameEvery, steps - done);
            if (!window.simulateSteps(chunk, &error)) {
                printError(error);
                return 1;
            }
            done += chunk;
            const QString path =
                folder.filePath(QStringLiteral("frame_%1.png").arg(done, 6, 10, QLatin1Char('0')));
            if (!window.saveScreenshot(path, size, &error)) {
                printError(error);
                return 3;
            }
        }
        if (!parser.isSet(screenshotOption)) {
            return 0;
        }
    } else if (steps > 0 && !window.simulateSteps(steps, &error)) {
        printError(error);
        if (batch) {
            return 1;
        }
    }
    if (!batch) {
        // The last session left unsaved work behind (a crash): offer it once the window shows.
        QTimer::singleShot(0, &window, [&window] { window.opening()->offerRecovery(); });
        return app.exec();
    }

    // Batch: wait until the view has an OpenGL context, render, write, exit.
    if (!waitForRendering(window)) {
        return 4;
    }
    if (!parser.isSet(framesOption)) {
        window.viewport()->resetCamera(); // framed at the view's size, as a user sees it
    }
    if (!window.saveScreenshot(parser.value(screenshotOption), size, &error)) {
        printError(error);
        return 3;
    }
    return 0;
}
