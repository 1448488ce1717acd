import CAdw
import CGtk
import Datasets
import FetchedResults
import Foundation
import GtkBinding
import ObjectStore
@testable import Viewer
import XCTest

/// A window whose section cache is not valid shows at once, with "Loading…" in its list, and
/// then its rows, fetched off the main thread; an edit made meanwhile is in them; the next
/// window reads the cache the first one wrote, and has its rows at once.
final class LoadingWindowTests: ViewerTestCase, @unchecked Sendable {
    private var savedCacheDirectory: URL?

    override func setUpWithError() throws {
        try super.setUpWithError()
        savedCacheDirectory = SectionCache.directory
        SectionCache.directory = storeFolder.appendingPathComponent("cache")
    }

    override func tearDown() {
        super.tearDown()
        if let savedCacheDirectory { SectionCache.directory = savedCacheDirectory }
    }

    /// A window whose main loop has not run yet: its rows can only have come from the cache.
    @MainActor private func makeWindow() throws -> ViewerWindow {
        try openWindow(waiting: false)
    }

    @MainActor private func statusTitle(_ window: ViewerWindow) -> String? {
        adw_status_page_get_title(window.emptyPage.opaque).map { String(cString: $0) }
    }

    func testTheWindowShowsLoadingAndThenItsRows() throws { try MainActor.assumeIsolated {
        let window = try makeWindow()
        XCTAssertTrue(window.isLoading, "no valid cache: the rows are fetched in the background")
        XCTAssertEqual(window.listedObjectCount, 0)
        XCTAssertEqual(gtk_stack_get_visible_child_name(window.listStack.opaque).map { String(cString: $0) }, "empty")
        XCTAssertEqual(statusTitle(window), "Loading…", "not “Nothing Here Yet”: the rows are on their way")
        XCTAssertEqual(gtk_spinner_get_spinning(window.loadingSpinner.opaque), 1)
        XCTAssertEqual(String(cString: gtk_window_get_title(window.window.cast())), "World Cup", "the header is there")

        XCTAssertTrue(MainLoop.iterate(until: { !window.isLoading && gtk_widget_get_mapped(window.listView) != 0 }))
        MainLoop.iterate(for: 0.2)
        XCTAssertEqual(window.listedObjectCount, 32)
        XCTAssertEqual(window.rows(inSection: "Africa").first, "> Algeria · Wins: 0", "the first team is selected once the rows are in")
        XCTAssertEqual(window.detailLines.first, "Algeria")
        XCTAssertEqual(gtk_spinner_get_spinning(window.loadingSpinner.opaque), 0)
        XCTAssertEqual(gtk_stack_get_visible_child_name(window.listStack.opaque).map { String(cString: $0) }, "list")
    } }

    /// A team added (as the Add dialog does) and a win saved before the fetch's results are
    /// shown: both are in the list that follows.
    func testAnEditWhileLoadingIsNotLost() throws { try MainActor.assumeIsolated {
        let window = try makeWindow()
        XCTAssertTrue(window.isLoading)
        let context = try XCTUnwrap(window.session?.context)
        let team = try context.insert(entityName: "Team")
        try team.setValue("Atlantis", forKey: "teamName")
        try team.setValue("Africa", forKey: "qualifyingZone")
        try team.setValue(9, forKey: "wins")
        let nigeria = try XCTUnwrap(try context.fetch(FetchRequest<ManagedObject>(
            entityName: "Team", predicate: try FetchPredicate(format: "teamName == 'Nigeria'"))).first)
        try nigeria.setValue(4, forKey: "wins")
        try context.save()
        XCTAssertTrue(window.isLoading, "the edits came before the rows")

        XCTAssertTrue(MainLoop.iterate(until: { !window.isLoading }))
        MainLoop.iterate(for: 0.2)
        XCTAssertEqual(window.rows(inSection: "Africa").map { $0.dropFirst(2) }, [
            "Atlantis · Wins: 9", "Nigeria · Wins: 4", "Algeria · Wins: 0", "Cameroon · Wins: 0", "Ghana · Wins: 0", "Ivory Coast · Wins: 0",
        ])
        let fresh = try Dataset.load(named: "worldcup").makeController(context: ObjectContext(store: context.store))
        try fresh.performFetch()
        XCTAssertEqual(window.session?.controller.snapshot, fresh.snapshot)
    } }

    func testTheNextWindowReadsTheCacheAndHasItsRowsAtOnce() throws { try MainActor.assumeIsolated {
        let first = try makeWindow()
        XCTAssertTrue(MainLoop.iterate(until: { !first.isLoading }))
        let cacheFile = SectionCache.directory.appendingPathComponent("worldcup.frcache")
        XCTAssertTrue(MainLoop.iterate(until: { FileManager.default.fileExists(atPath: cacheFile.path) }), "the cache is written once the rows show")

        let second = try makeWindow()
        XCTAssertFalse(second.isLoading, "the rows come from the cache")
        XCTAssertEqual(second.listedObjectCount, 32)
        XCTAssertEqual(gtk_stack_get_visible_child_name(second.listStack.opaque).map { String(cString: $0) }, "list")
        XCTAssertTrue(MainLoop.iterate(until: { second.rows(inSection: "Africa").first == "> Algeria · Wins: 0" }))
    } }
}
