#include "core/scene/Body.h"

namespace pbd {

std::string_view toString(BodyKind kind) {
    switch (kind) {
    case BodyKind::Cloth:
        return "cloth";
    case BodyKind::TetBody:
        return "tet body";
    case BodyKind::Collider:
        return "collider";
    case BodyKind::Surface:
        return "surface";
    }
    return "unknown";
}

} // namespace pbd
