#pragma once
// Pixel classification for rendering tests: what a user would call "orange cloth" or "blue body".

#include <QImage>

namespace pbd::test {

inline bool isClothOrange(QRgb c) {
    return qRed(c) > 120 && qRed(c) - qBlue(c) > 80 && qGreen(c) > qBlue(c);
}

inline bool isBodyBlue(QRgb c) {
    return qBlue(c) > 110 && qBlue(c) - qRed(c) > 50;
}

template <class Pred> int countPixels(const QImage& image, Pred pred) {
    int n = 0;
    for (int y = 0; y < image.height(); ++y) {
        for (int x = 0; x < image.width(); ++x) {
            n += pred(image.pixel(x, y)) ? 1 : 0;
        }
    }
    return n;
}

inline int differingPixels(const QImage& a, const QImage& b) {
    if (a.size() != b.size()) {
        return a.width() * a.height();
    }
    int n = 0;
    for (int y = 0; y < a.height(); ++y) {
        for (int x = 0; x < a.width(); ++x) {
            const QRgb p = a.pixel(x, y), q = b.pixel(x, y);
            n += (std::abs(qRed(p) - qRed(q)) + std::abs(qGreen(p) - qGreen(q)) +
                      std::abs(qBlue(p) - qBlue(q)) >
                  24);
        }
    }
    return n;
}

inline bool near(QRgb c, const QColor& expected, int tolerance) {
    return std::abs(qRed(c) - expected.red()) <= tolerance &&
           std::abs(qGreen(c) - expected.green()) <= tolerance &&
           std::abs(qBlue(c) - expected.blue()) <= tolerance;
}

} // namespace pbd::test
