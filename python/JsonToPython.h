#pragma once
// JSON (the CLI's report format) as Python objects: shared by the pbdlab module and the
// window's Python console.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>
#include <string>

namespace pbd::python {

namespace py = pybind11;
using nlohmann::json;

// nlohmann JSON to Python objects (the CLI's report format, as Python data).
inline py::object toPython(const json& j) {
    switch (j.type()) {
    case json::value_t::null:
        return py::none();
    case json::value_t::boolean:
        return py::bool_(j.get<bool>());
    case json::value_t::number_integer:
        return py::int_(j.get<std::int64_t>());
    case json::value_t::number_unsigned:
        return py::int_(j.get<std::uint64_t>());
    case json::value_t::number_float:
        return py::float_(j.get<double>());
    case json::value_t::string:
        return py::str(j.get<std::string>());
    case json::value_t::array: {
        py::list list;
        for (const json& item : j) {
            list.append(toPython(item));
        }
        return list;
    }
    case json::value_t::object: {
        py::dict dict;
        for (auto it = j.begin(); it != j.end(); ++it) {
            dict[py::str(it.key())] = toPython(it.value());
        }
        return dict;
    }
    default:
        return py::none();
    }
}

} // namespace pbd::python
