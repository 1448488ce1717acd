import CGtk
import Datasets
import Foundation
import GtkBinding
import ObjectStore
@testable import Viewer
import XCTest

/// The window's list reaches GTK a few dozen rows a turn when a short list becomes long
/// (`FetchedResultsListModel.announcesGrowthInSteps`); a person using the keyboard meanwhile
/// still reaches the whole list.
final class GrowthInStepsTests: ViewerTestCase, @unchecked Sendable {
    /// End pressed just after a narrow search is cleared, while GTK knows only the first
    /// rows of the 3,032 teams, selects the last team of the whole list.
    func testEndWhileAClearedSearchStillReachesGTKSelectsTheLastTeam() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let session = try XCTUnwrap(window.session)
        let zones = try XCTUnwrap(session.controller.sections).map(\.name)
        for i in 0..<3_000 {
            let team = try session.context.insert(entityName: "Team")
            try team.setValue("Team \(i)", forKey: "teamName")
            try team.setValue(zones[i % zones.count], forKey: "qualifyingZone")
            try team.setValue(i % 7, forKey: "wins")
        }
        try session.context.save()
        XCTAssertTrue(MainLoop.iterate(until: { session.rows.count > 3_000 }, timeout: 20), "the new teams are listed: \(session.rows.count)")
        let total = session.controller.numberOfObjects

        var shown = false
        try session.apply(searchText: "Ghana") { _ in shown = true }
        XCTAssertTrue(MainLoop.iterate(until: { shown && session.rows.count < 10 }, timeout: 20), "the search shows Ghana: \(session.rows.count)")
        let narrow = session.rows.count
        // Nothing selected: a selected row far down the long list would be announced (and
        // every row before it) as soon as the window shows it.
        session.selection.select(nil)
        shown = false
        try session.apply(searchText: "") { _ in shown = true }
        // One dispatch of the main loop at a time: MainLoop.iterate would run the steps too.
        let deadline = Date().addingTimeInterval(20)
        while session.rows.count <= narrow && Date() < deadline { g_main_context_iteration(nil, 1) }
        XCTAssertLessThan(session.rows.count, 300, "GTK knows only the first rows while the list grows in steps")

        // The first team selected, as a person who has just cleared the search sees it.
        session.selection.select(session.controller.object(at: IndexPath(item: 0, section: 0)))
        XCTAssertLessThan(session.rows.count, 300, "selecting the first team announces nothing more")
        let controller = try XCTUnwrap(listNavigation(of: window))
        XCTAssertTrue(pressKey(GDK_KEY_End, on: controller), "the list takes End")
        MainLoop.iterate(for: 0.5)
        let sections = try XCTUnwrap(session.controller.sections)
        let lastSection = try XCTUnwrap(sections.lastIndex { $0.numberOfObjects > 0 })
        let last = session.controller.object(at: IndexPath(item: sections[lastSection].numberOfObjects - 1, section: lastSection))
        XCTAssertEqual(session.controller.numberOfObjects, total, "every team is back")
        XCTAssertTrue(session.selection.selectedObject === last, "End selects the last team (\(ViewConfiguration.text(of: last, keyPath: "teamName"))), not the last GTK knew of: \(window.detailLines.first ?? "none")")
        XCTAssertGreaterThan(session.rows.count, 3_000, "GTK knows the whole list")
    } }

    /// The list's capture-phase key controller (`addListNavigation`).
    @MainActor private func listNavigation(of window: ViewerWindow) -> OpaquePointer? {
        let controllers = gtk_widget_observe_controllers(window.listView)
        defer { g_object_unref(UnsafeMutableRawPointer(controllers)) }
        for index in 0..<g_list_model_get_n_items(controllers) {
            guard let item = g_list_model_get_item(controllers, index) else { continue }
            g_object_unref(item)
            let controller = OpaquePointer(item)
            if g_type_check_instance_is_a(item.assumingMemoryBound(to: GTypeInstance.self), gtk_event_controller_key_get_type()) != 0,
               gtk_event_controller_get_propagation_phase(controller) == GTK_PHASE_CAPTURE {
                return controller
            }
        }
        return nil
    }
}
