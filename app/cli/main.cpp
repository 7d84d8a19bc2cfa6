// pbdlab-cli: PBD Lab without a display, for scripts, batch preparation and benchmarks. Each
// subcommand lives in its own file (scenes, info, prepare, export, simulate, bench).

#include "app/cli/Command.h"
#include "core/base/InstructionSets.h"
#include "core/base/Version.h"
#include "core/solver/KernelPaths.h"
#include "meshing/LibraryVersions.h"

#include <cstdio>
#include <iostream>
#include <map>
#include <new>

namespace {

using namespace pbd::cli;

// The top-level help lists each command with what it takes.
class CommandListFormatter : public CLI::Formatter {
public:
    std::string make_subcommand(const CLI::App* sub) const override {
        // What each command takes, and what it does in a line.
        static const std::map<std::string, std::pair<std::string, std::string>> summary = {
            {"scenes", {"scenes [--json]", "list the scenes PBD Lab generates"}},
            {"info",
             {"info SCENE|MESH|PROJECT|ASSET", "bodies, counts, size, mass, groups, problems"}},
            {"prepare",
             {"prepare MESH...", "repair, tetrahedralize, air, frames; write project, asset"}},
            {"export",
             {"export SCENE|PROJECT|ASSET", "write a project, asset, .vtu, .msh, TetGen"}},
            {"simulate",
             {"simulate SCENE|PROJECT|ASSET", "step it; positions, fields, residuals as JSON"}},
            {"bench", {"bench SCENE|PROJECT|ASSET", "time the solver: ms per step, ns per check"}},
            {"bench-prepare",
             {"bench-prepare MESH", "time preparing it subdivided to 1M triangles, in a cage"}},
        };
        const auto it = summary.find(sub->get_name());
        if (it == summary.end()) {
            return CLI::Formatter::make_subcommand(sub);
        }
        std::string line = "  " + it->second.first;
        line.resize(std::max<std::size_t>(line.size() + 2, 34), ' ');
        return line + it->second.second + "\n";
    }
};

// A parse error as a sentence: a validator's message follows its option's name
// ("--dt needs a positive time step ..."), CLI11's own messages are kept.
std::string describeError(const CLI::ParseError& e) {
    std::string message = e.what();
    if (dynamic_cast<const CLI::ValidationError*>(&e) != nullptr && message.starts_with("-")) {
        if (const std::size_t colon = message.find(": "); colon != std::string::npos) {
            message = message.substr(0, colon) + " " + message.substr(colon + 2);
        }
    }
    return message;
}

void printVersion() {
    std::cout << "pbdlab-cli " << pbd::kVersion << '\n';
    for (const pbd::LibraryVersion& v : pbd::meshingLibraryVersions()) {
        std::cout << "  " << v.name << ' ' << v.version << '\n';
    }
    const pbd::kernels::KernelPath& path = pbd::kernels::kernelPath();
    std::cout << "  kernels " << path.name << " (" << path.lanes << " lanes; this CPU runs "
              << pbd::kernels::kernelPathNames() << ")\n";
}

} // namespace

int main(int argc, char** argv) {
    CLI::App cli("PBD Lab without a display: generated scenes, mesh preparation, export, "
                 "simulation and benchmarks.",
                 "pbdlab-cli");
    cli.formatter(std::make_shared<CommandListFormatter>());
    cli.footer("Each command's options: pbdlab-cli COMMAND --help.\n"
               "Exit status: 0 on success, 1 when the input has problems, 2 on a usage error.");
    cli.require_subcommand(1);
    bool version = false;
    cli.add_flag("-v,--version", version, "Show the version of PBD Lab and its libraries and exit");
    int status = kSuccess;
    if (const std::string problem = pbd::isa::environmentProblem(); !problem.empty()) {
        std::fprintf(stderr, "pbdlab-cli: warning: %s\n", problem.c_str());
    }
    addScenesCommand(cli, status);
    addInfoCommand(cli, status);
    addPrepareCommand(cli, status);
    addExportCommand(cli, status);
    addSimulateCommand(cli, status);
    addBenchCommand(cli, status);
    addBenchPrepareCommand(cli, status);
    addCharacterCommand(cli, status);
    if (argc == 1) {
        std::cerr << cli.help();
        return kUsageError;
    }
    // A first word that is no command and no option is an unknown command, said as such.
    if (argc > 1 && argv[1][0] != '-' && std::string_view(argv[1]) != "help") {
        const auto subs =
            cli.get_subcommands([&](const CLI::App* s) { return s->get_name() == argv[1]; });
        if (subs.empty()) {
            std::fprintf(stderr, "pbdlab-cli: unknown command '%s'\nTry 'pbdlab-cli --help'.\n",
                         argv[1]);
            return kUsageError;
        }
    }
    if (argc == 2 && std::string_view(argv[1]) == "help") {
        std::cout << cli.help();
        return kSuccess;
    }
    if (argc == 2 &&
        (std::string_view(argv[1]) == "-v" || std::string_view(argv[1]) == "--version")) {
        printVersion();
        return kSuccess;
    }
    try {
        cli.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        std::cout << cli.help();
        return kSuccess;
    } catch (const CLI::CallForAllHelp&) {
        std::cout << cli.help("", CLI::AppFormatMode::All);
        return kSuccess;
    } catch (const CLI::ParseError& e) {
        // A subcommand's --help arrives here too, as CallForHelp from the subcommand.
        if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
            return cli.exit(e);
        }
        std::string command;
        for (const CLI::App* sub : cli.get_subcommands()) {
            command = " " + sub->get_name();
        }
        std::fprintf(stderr, "pbdlab-cli%s: %s\nTry 'pbdlab-cli%s --help'.\n", command.c_str(),
                     describeError(e).c_str(), command.c_str());
        return kUsageError;
    } catch (const std::exception& e) {
        // Whatever a command did not catch itself (out of memory) is said, not an abort.
        std::string command;
        for (const CLI::App* sub : cli.get_subcommands()) {
            command = " " + sub->get_name();
        }
        const bool memory = dynamic_cast<const std::bad_alloc*>(&e) != nullptr;
        std::fprintf(stderr, "pbdlab-cli%s: %s\n", command.c_str(),
                     memory ? "out of memory" : e.what());
        return kInputProblem;
    }
    return status;
}
