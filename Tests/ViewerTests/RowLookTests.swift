import CAdw
import CGtk
import GtkBinding
import Datasets
import Foundation
import ObjectStore
@testable import Viewer
import XCTest

/// How rows look: a done to-do dimmed, the avatar's initials readable.
final class RowLookTests: ViewerTestCase, @unchecked Sendable {
    /// The row content GTK shows for the object titled `title`.
    @MainActor private func content(of window: ViewerWindow, titled title: String) throws -> Widget {
        let object = try XCTUnwrap(window.object(titled: title))
        let row = try XCTUnwrap(window.factory?.rowWidget(showing: object.objectID), "\(title) is shown")
        return try XCTUnwrap(row.descendants.first { gtk_widget_has_css_class($0, "object-row") != 0 })
    }

    func testADoneToDoLooksDone() throws { try MainActor.assumeIsolated {
        let window = try openWindow("todo")
        XCTAssertTrue(window.rows(inSection: "Groceries").contains("  [x] Bread"), "\(window.rows(inSection: "Groceries"))")
        XCTAssertEqual(gtk_widget_has_css_class(try content(of: window, titled: "Bread"), "done"), 1, "a done item is dimmed")
        XCTAssertEqual(gtk_widget_has_css_class(try content(of: window, titled: "Milk"), "done"), 0)
        let session = try XCTUnwrap(window.session)
        try session.setToggle(of: try XCTUnwrap(window.object(titled: "Milk")), to: true)
        MainLoop.iterate(for: 0.2)
        XCTAssertEqual(gtk_widget_has_css_class(try content(of: window, titled: "Milk"), "done"), 1, "ticked, it looks done")
    } }

    /// A done item's title is dimmed but still reads: at least WCAG's 4.5:1 against its row,
    /// measured on the drawn pixels, selected and not, light and dark.
    func testADoneItemsTitleKeepsItsContrastSelectedAndNotLightAndDark() throws { try MainActor.assumeIsolated {
        let window = try openWindow("todo")
        let styles = adw_style_manager_get_default()
        defer { adw_style_manager_set_color_scheme(styles, ADW_COLOR_SCHEME_DEFAULT) }
        var ratios: [String: Double] = [:]
        for (scheme, name) in [(ADW_COLOR_SCHEME_FORCE_LIGHT, "light"), (ADW_COLOR_SCHEME_FORCE_DARK, "dark")] {
            adw_style_manager_set_color_scheme(styles, scheme)
            for selected in [false, true] {
                window.session!.selection.select(window.object(titled: selected ? "Bread" : "Milk"))
                MainLoop.iterate(for: 0.3)
                let title = try XCTUnwrap(content(of: window, titled: "Bread").descendants.first { gtk_widget_has_css_class($0, "row-title") != 0 })
                ratios["\(name)\(selected ? ", selected" : "")"] = try drawnContrast(of: title, in: window.window)
            }
        }
        print("contrast of a done item's title:", ratios.sorted { $0.key < $1.key })
        XCTAssertEqual(ratios.count, 4)
        for (look, ratio) in ratios { XCTAssertGreaterThanOrEqual(ratio, 4.5, look) }
    } }

    /// The contrast ratio (WCAG) between a label's text and its background as drawn: the
    /// background is the label's most common colour, the text the colour farthest from it.
    @MainActor private func drawnContrast(of label: Widget, in window: Widget) throws -> Double {
        var bounds = graphene_rect_t()
        XCTAssertNotEqual(gtk_widget_compute_bounds(label, window, &bounds), 0)
        let pixels = try Screenshot.pixels(of: window)
        var counts: [Int: Int] = [:]
        var luminances: [Int: Double] = [:]
        for y in Int(bounds.origin.y)..<Int(bounds.origin.y + bounds.size.height) {
            for x in Int(bounds.origin.x)..<Int(bounds.origin.x + bounds.size.width) {
                let c = pixels.color(x: x, y: y)
                let key = c.red << 16 | c.green << 8 | c.blue
                counts[key, default: 0] += 1
                luminances[key] = Self.luminance(c)
            }
        }
        let background = try XCTUnwrap(counts.max { $0.value < $1.value }?.key)
        let lb = luminances[background]!
        let ratio = { (l: Double) in (max(l, lb) + 0.05) / (min(l, lb) + 0.05) }
        return luminances.values.map(ratio).max() ?? 1
    }

    /// WCAG's relative luminance of an sRGB colour.
    private static func luminance(_ c: (red: Int, green: Int, blue: Int)) -> Double {
        zip([c.red, c.green, c.blue], [0.2126, 0.7152, 0.0722]).reduce(0) { sum, channel in
            let v = Double(channel.0) / 255
            return sum + channel.1 * (v <= 0.03928 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4))
        }
    }

}

/// The avatar's colours, from the CSS (no display needed).
final class AvatarColourTests: XCTestCase {
    /// White initials on every avatar colour reach WCAG's 4.5:1, so that they read on the
    /// selection's blue too (where a ring keeps the circle apart from it).
    func testAvatarInitialsAreReadableOnEveryColour() { MainActor.assumeIsolated {
        func luminance(_ hex: Substring) -> Double {
            let value = Int(hex, radix: 16)!
            return zip([16, 8, 0], [0.2126, 0.7152, 0.0722]).reduce(0) { sum, channel in
                let c = Double((value >> channel.0) & 0xFF) / 255
                return sum + channel.1 * (c <= 0.03928 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4))
            }
        }
        let colours = Style.css.split(separator: "\n").filter { $0.contains(".avatar-color-") }
        XCTAssertEqual(colours.count, Placeholder.colorClasses.count)
        for line in colours {
            let hex = try! XCTUnwrap(line.split(separator: "#").last?.prefix(6))
            XCTAssertGreaterThanOrEqual(1.05 / (luminance(hex) + 0.05), 4.5, String(line))
        }
        XCTAssertTrue(Style.rowStateCSS.contains("row:selected .avatar { box-shadow"))
    } }
}
