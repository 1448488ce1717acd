import CAdw
import CGtk
import GtkBinding
import Datasets
import Foundation
import ObjectStore
@testable import Viewer
import XCTest

/// Several rows selected at once (GtkListView's own Ctrl-click, Shift-click and Ctrl+A, as
/// `list.select-item` and `list.select-all`): the detail pane says how many, Edit waits for
/// one, Delete deletes them all in one save with one toast, and one Undo brings them all
/// back. Headers a range or Ctrl+A takes in are never counted or deleted.
final class SelectionModeTests: ViewerTestCase, @unchecked Sendable {
    /// Clicks the row titled `title` as GTK's list does: `modify` as with Ctrl, `extend` as
    /// with Shift.
    @MainActor private func click(_ title: String, in window: ViewerWindow, modify: Bool = false, extend: Bool = false,
                                  file: StaticString = #filePath, line: UInt = #line) {
        guard let position = window.position(ofRowTitled: title) else { return XCTFail("no row \(title)", file: file, line: line) }
        gtk_widget_activate_action_variant(window.listView, "list.select-item",
                                           g_variant_new_tuple([g_variant_new_uint32(guint32(position)), g_variant_new_boolean(modify ? 1 : 0),
                                                                g_variant_new_boolean(extend ? 1 : 0)], 3))
        MainLoop.iterate(for: 0.05)
    }

    /// The rows marked selected (`>` the one the selection started from, `+` the others).
    @MainActor private func marked(_ window: ViewerWindow) -> [String] {
        window.listLines.filter { $0.hasPrefix(">") || $0.hasPrefix("+") }
    }

    func testCtrlClickedTeamsAreDeletedTogetherAndOneUndoBringsThemAllBack() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let session = try XCTUnwrap(window.session)
        let ghana = try XCTUnwrap(window.object(titled: "Ghana"))
        try ghana.setValue(1, forKey: "wins")  // a value Undo must bring back (saved as another program would: no Undo of its own)
        try session.context.save()
        MainLoop.iterate(for: 0.1)
        let before = window.listLines.map { $0.dropFirst(2) }
        click("Ghana", in: window)
        click("Brazil", in: window, modify: true)
        click("Japan", in: window, modify: true)
        XCTAssertEqual(marked(window), ["> Ghana · Wins: 1", "+ Japan · Wins: 0", "+ Brazil · Wins: 0"])
        XCTAssertEqual(session.selection.selectedCount, 3)
        XCTAssertEqual(window.detailLines.first, "3 Teams Selected", window.detailLines.joined(separator: "\n"))
        XCTAssertEqual(gtk_widget_get_sensitive(window.editButton), 0, "Edit waits for one team")
        XCTAssertEqual(gtk_widget_get_sensitive(window.deleteButton), 1)

        window.deleteSelection()
        MainLoop.iterate(for: 0.2)
        XCTAssertEqual(window.listLines.filter { $0.hasPrefix("[") == false }.count, 29)
        XCTAssertFalse(window.listLines.contains { $0.contains("Ghana") || $0.contains("Brazil") || $0.contains("Japan") })
        XCTAssertEqual(window.shownToast, "3 teams deleted", "one toast for the three")
        XCTAssertEqual(try session.context.count(for: FetchRequest<ManagedObject>(entityName: "Team")), 29)

        window.undo()
        MainLoop.iterate(for: 0.2)
        XCTAssertEqual(window.listLines.map { $0.dropFirst(2) }, before, "all three back, Ghana with its win")
        XCTAssertEqual(try session.context.count(for: FetchRequest<ManagedObject>(entityName: "Team")), 32)
        XCTAssertEqual(gtk_widget_get_sensitive(window.undoButton), 0, "one Undo took back the one delete")
    } }

    /// Shift-click selects a range across a section header, which is neither counted nor
    /// deleted; Ctrl+A selects every team; a plain click selects one again.
    func testARangeAndSelectAllCountTeamsNotHeaders() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let session = try XCTUnwrap(window.session)
        click("Nigeria", in: window)  // the last team of Africa
        click("Australia", in: window, extend: true)  // past the "Asia" header
        XCTAssertEqual(session.selection.selectedCount, 2, window.listLines.joined(separator: "\n"))
        XCTAssertEqual(session.selection.selectedObjects.map { ViewConfiguration.text(of: $0, keyPath: "teamName") }, ["Nigeria", "Australia"])

        gtk_widget_activate_action_variant(window.listView, "list.select-all", nil)
        MainLoop.iterate(for: 0.05)
        XCTAssertEqual(session.selection.selectedCount, 32)
        XCTAssertEqual(window.detailLines.first, "32 Teams Selected")
        // More than Delete takes at once (10,000; 20 here) are refused, not deleted.
        window.deleteLimit = 20
        window.deleteSelection()
        MainLoop.iterate(for: 0.1)
        XCTAssertEqual(window.shownToast, "32 teams are selected: delete at most 20 at once")
        XCTAssertEqual(try session.context.count(for: FetchRequest<ManagedObject>(entityName: "Team")), 32)
        XCTAssertEqual(session.selection.selectedObject.map { ViewConfiguration.text(of: $0, keyPath: "teamName") }, "Nigeria",
                       "the row the selection started from stays its first")

        click("Ghana", in: window)
        XCTAssertEqual(session.selection.selectedCount, 1)
        XCTAssertEqual(marked(window), ["> Ghana · Wins: 0"])
        XCTAssertEqual(window.detailLines.first, "Ghana")
    } }

    /// Rows selected together stay selected while another program's change moves a row
    /// among them, and the one the selection started from is followed to its new place.
    func testSelectedRowsStaySelectedWhileTheListChanges() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let session = try XCTUnwrap(window.session)
        click("Ghana", in: window)
        click("Cameroon", in: window, modify: true)
        // Ghana moves to the top of Africa with a win.
        try session.incrementCounter(of: try XCTUnwrap(window.object(titled: "Ghana")))
        MainLoop.iterate(for: 0.2)
        XCTAssertEqual(window.rows(inSection: "Africa").first, "> Ghana · Wins: 1")
        XCTAssertEqual(session.selection.selectedCount, 2, window.listLines.joined(separator: "\n"))
        XCTAssertTrue(window.rows(inSection: "Africa").contains("+ Cameroon · Wins: 0"), window.listLines.joined(separator: "\n"))
    } }
}
