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
        XCTAssertTrue(Style.rowStateCSS.contains(".object-row.done .row-title { opacity:"), "the title is dimmed")
    } }

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
