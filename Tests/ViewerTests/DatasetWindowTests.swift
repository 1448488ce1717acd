import CGtk
import GtkBinding
import Datasets
import Foundation
import ObjectStore
@testable import Viewer
import XCTest

/// The other shipped datasets in the window.
final class DatasetWindowTests: ViewerTestCase, @unchecked Sendable {
    func testMoviesShowLentAndNotLentAndTheCheckButtonMovesAMovie() throws { try MainActor.assumeIsolated {
        let window = try openWindow("movies")
        let headers = window.listLines.filter { $0.hasPrefix("[") }
        XCTAssertEqual(headers, ["[Lent]", "[Not lent]"])
        XCTAssertEqual(window.rows(inSection: "Lent").count, 6)
        let notLent = window.rows(inSection: "Not lent")
        XCTAssertEqual(notLent.count, 38)
        XCTAssertTrue(notLent.allSatisfy { $0.hasPrefix("  [ ] ") || $0.hasPrefix("> [ ] ") }, "unchecked: \(notLent.prefix(3))")

        // Check a movie that GTK shows, with its real check button.
        MainLoop.iterate(for: 0.2)
        let title = String(notLent[0].dropFirst(6).split(separator: " · ")[0])
        let movie = try XCTUnwrap(window.object(titled: title))
        let row = try XCTUnwrap(window.factory?.rowWidget(showing: movie.objectID), "\(title) is shown")
        let check = try XCTUnwrap(row.descendants.first { $0.isA(gtk_check_button_get_type()) })
        gtk_check_button_set_active(check.cast(), 1)
        MainLoop.iterate(for: 0.2)
        XCTAssertEqual(window.rows(inSection: "Lent").count, 7)
        XCTAssertTrue(window.rows(inSection: "Lent").contains { $0.contains("[x] \(title) · ") }, "\(window.rows(inSection: "Lent"))")
        XCTAssertEqual(movie.attributeValue(forKey: "lent"), .bool(true))
        XCTAssertFalse(movie.hasChanges, "saved")
    } }

    func testToDoShowsItsEmptyListAndTogglesDone() throws { try MainActor.assumeIsolated {
        let window = try openWindow("todo")
        let headers = window.listLines.filter { $0.hasPrefix("[") }
        XCTAssertTrue(headers.contains("[Someday] (nothing here yet)"), "\(headers)")
        XCTAssertEqual(window.rows(inSection: "Someday"), [], "the empty list is a header without rows")
        let session = try XCTUnwrap(window.session)
        // Its header says so on screen (scrolled into view first: the list is at its end).
        let someday = try XCTUnwrap(window.listLines.firstIndex(of: "[Someday] (nothing here yet)"))
        gtk_widget_activate_action_variant(window.listView, "list.scroll-to-item", g_variant_new_uint32(guint32(someday)))
        XCTAssertTrue(MainLoop.iterate(until: { window.shownTexts(withClass: "section-empty") == ["Nothing here yet"] }),
                      "\(window.shownTexts(withClass: "section-empty"))")
        // An item moved into it: the note goes; the list emptied again: it comes back.
        let milk = try XCTUnwrap(window.object(titled: "Milk"))
        let somedayList = try XCTUnwrap(try session.context.fetch(FetchRequest<ManagedObject>(entityName: "List", predicate: try FetchPredicate(format: "title == 'Someday'"))).first)
        try milk.setValue(somedayList, forKey: "list")
        try session.context.save()
        XCTAssertTrue(MainLoop.iterate(until: { window.shownTexts(withClass: "section-empty").isEmpty }), "a list with an item has no note")
        try milk.setValue(try XCTUnwrap(try session.context.fetch(FetchRequest<ManagedObject>(entityName: "List", predicate: try FetchPredicate(format: "title == 'Groceries'"))).first), forKey: "list")
        try session.context.save()
        XCTAssertTrue(MainLoop.iterate(until: { window.listLines.contains("[Someday] (nothing here yet)") }), "\(window.listLines)")
        XCTAssertTrue(MainLoop.iterate(until: { window.shownTexts(withClass: "section-empty") == ["Nothing here yet"] }), "the note is back")
        let item = try XCTUnwrap(session.object(atPosition: 1))
        try session.setToggle(of: item, to: true)
        MainLoop.iterate(for: 0.1)
        XCTAssertTrue(window.listLines[1].contains("[x] "), "\(window.listLines[1])")
        XCTAssertTrue(window.detailLines.contains("List"), "the item's list, a to-one relationship: \(window.detailLines)")
    } }

    func testFailedBanksAreSortedByCloseDateAcrossTheRelationship() throws { try MainActor.assumeIsolated {
        let window = try openWindow("failedbanks")
        let lines = window.listLines
        XCTAssertEqual(lines.count, 534)
        XCTAssertFalse(lines.contains { $0.hasPrefix("[") }, "no sections, no headers")
        let dates = lines.map { String($0.suffix(10)) }
        XCTAssertEqual(dates, dates.sorted(by: >), "most recent first")
        // The detail pane shows the related details object's attributes.
        let detail = window.detailLines
        XCTAssertTrue(detail.contains("Details") && detail.contains("Close date") && detail.contains(dates[0]), "\(detail)")
        XCTAssertTrue(detail.contains("Acquiring institution"))
    } }

    func testTheDetailPaneFollowsEditsOfTheSelectedObject() throws { try MainActor.assumeIsolated {
        let window = try openWindow("failedbanks")
        let session = try XCTUnwrap(window.session)
        let bank = try XCTUnwrap(session.selection.selectedObject)
        let details = try XCTUnwrap(bank.relatedObjects(forKey: "details").first as? ManagedObject)
        try details.setValue("Bank of Tests", forKey: "acquiringInstitution")
        try session.context.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertTrue(window.detailLines.contains("Bank of Tests"), "a change of the related object shows: \(window.detailLines)")
    } }
}
