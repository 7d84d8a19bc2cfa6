#pragma once
// What every pbdlab-cli subcommand shares: its exit codes, how it is registered with the
// command line, and the validators that give a bad option a message naming the option.

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace pbd::cli {

// Exit status: 0 success, 1 the input has problems (a missing or invalid file, a diverged
// run, an edit that cannot be made), 2 a usage error (an unknown option, a bad value).
enum ExitCode : int { kSuccess = 0, kInputProblem = 1, kUsageError = 2 };

// Each subcommand adds itself to `cli`; its callback runs the command and stores its exit
// status in `status`.
void addScenesCommand(CLI::App& cli, int& status);
void addInfoCommand(CLI::App& cli, int& status);
void addPrepareCommand(CLI::App& cli, int& status);
void addExportCommand(CLI::App& cli, int& status);
void addSimulateCommand(CLI::App& cli, int& status);
void addBenchCommand(CLI::App& cli, int& status);
void addBenchPrepareCommand(CLI::App& cli, int& status);
void addCharacterCommand(CLI::App& cli, int& status);

// A problem with the input, on stderr as "pbdlab-cli: MESSAGE"; returns kInputProblem.
int inputProblem(const std::string& message);
// The files a command will write (empty: not asked for), checked before it works: each is in a
// folder that exists and is not a folder itself. kSuccess, or inputProblem naming the file.
int checkOutputs(const std::vector<std::string>& paths);

// Validators. Their messages follow the option's name ("--dt needs a positive ..."): see
// describeError in main.cpp.
// A whole number, or a finite number, for which `ok` holds; otherwise "needs NEEDS, not 'VALUE'".
CLI::Validator wholeWhere(std::function<bool(long)> ok, std::string needs, std::string type);
CLI::Validator numberWhere(std::function<bool(double)> ok, std::string needs, std::string type);
CLI::Validator positiveWhole();    // 1, 2, 3, ...
CLI::Validator wholeAtLeastZero(); // 0, 1, 2, ...
CLI::Validator positiveNumber(const std::string& what = "a positive number");
CLI::Validator numberAtLeastZero(); // >= 0, finite
CLI::Validator oneOf(std::vector<std::string> choices);

// `option` takes one of `choices` ("on|off" in the help).
CLI::Option* choice(CLI::Option* option, const std::vector<std::string>& choices);
CLI::Option* onOff(CLI::Option* option);

} // namespace pbd::cli
