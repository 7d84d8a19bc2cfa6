#include "app/cli/Command.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace pbd::cli {

namespace {

// The whole of `text` as a number; false when any of it is not.
bool parseDouble(const std::string& text, double& value) {
    char* end = nullptr;
    value = std::strtod(text.c_str(), &end);
    return !text.empty() && end != text.c_str() && *end == '\0';
}

bool parseLong(const std::string& text, long& value) {
    char* end = nullptr;
    value = std::strtol(text.c_str(), &end, 10);
    return !text.empty() && end != text.c_str() && *end == '\0';
}

CLI::Validator make(std::function<std::string(std::string&)> check, std::string description) {
    return CLI::Validator(std::move(check), std::move(description));
}

} // namespace

int inputProblem(const std::string& message) {
    std::fprintf(stderr, "pbdlab-cli: %s\n", message.c_str());
    return kInputProblem;
}

CLI::Validator wholeWhere(std::function<bool(long)> ok, std::string needs, std::string type) {
    return make(
        [ok, needs](std::string& s) -> std::string {
            long v = 0;
            return parseLong(s, v) && ok(v) ? "" : "needs " + needs + ", not '" + s + "'";
        },
        std::move(type));
}

CLI::Validator numberWhere(std::function<bool(double)> ok, std::string needs, std::string type) {
    return make(
        [ok, needs](std::string& s) -> std::string {
            double v = 0;
            return parseDouble(s, v) && std::isfinite(v) && ok(v)
                       ? ""
                       : "needs " + needs + ", not '" + s + "'";
        },
        std::move(type));
}

CLI::Validator positiveWhole() {
    return wholeWhere([](long v) { return v >= 1; }, "a positive whole number", "INT>=1");
}

CLI::Validator wholeAtLeastZero() {
    return wholeWhere([](long v) { return v >= 0; }, "a whole number >= 0", "INT>=0");
}

CLI::Validator positiveNumber(const std::string& what) {
    return numberWhere([](double v) { return v > 0; }, what, "NUMBER>0");
}

CLI::Validator numberAtLeastZero() {
    return numberWhere([](double v) { return v >= 0; }, "a number >= 0", "NUMBER>=0");
}

CLI::Validator oneOf(std::vector<std::string> choices) {
    std::string list, bar;
    for (std::size_t i = 0; i < choices.size(); ++i) {
        list += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
        bar += (i == 0 ? "" : "|") + choices[i];
    }
    return make(
        [choices, list](std::string& s) -> std::string {
            for (const std::string& c : choices) {
                if (s == c) {
                    return "";
                }
            }
            return "is " + list + ", not '" + s + "'";
        },
        "");
}

int checkOutputs(const std::vector<std::string>& paths) {
    namespace fs = std::filesystem;
    for (const std::string& p : paths) {
        if (p.empty()) {
            continue; // not asked for
        }
        std::error_code error;
        const fs::path path(p);
        if (fs::is_directory(path, error)) {
            return inputProblem("could not write '" + p + "': it is a folder");
        }
        const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
        if (!fs::is_directory(folder, error)) {
            return inputProblem("could not write '" + p + "': the folder '" + folder.string() +
                                "' does not exist");
        }
    }
    return kSuccess;
}

CLI::Option* choice(CLI::Option* option, const std::vector<std::string>& choices) {
    std::string bar;
    for (const std::string& c : choices) {
        bar += (bar.empty() ? "" : "|") + c;
    }
    return option->check(oneOf(choices))->type_name(bar);
}

CLI::Option* onOff(CLI::Option* option) {
    return choice(option, {"on", "off"});
}

} // namespace pbd::cli
