import CGtk
import GtkBinding
import Datasets
import Dispatch
import Foundation
import ObjectStore
@testable import Viewer
import XCTest

/// The World Cup window, driven in-process as a person would: taps, selection, detail pane,
/// search, sort, and changes made elsewhere.
final class WorldCupWindowTests: ViewerTestCase, @unchecked Sendable {
    func testTappingATeamUntilItOvertakesTheOneAboveMovesItsRowAndKeepsItSelected() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        XCTAssertEqual(window.rows(inSection: "Africa"), [
            "> Algeria · Wins: 0", "  Cameroon · Wins: 0", "  Ghana · Wins: 0", "  Ivory Coast · Wins: 0", "  Nigeria · Wins: 0",
        ])
        window.activateRow(titled: "Cameroon")
        window.activateRow(titled: "Cameroon")
        var taps = 0
        while let ghana = window.position(ofRowTitled: "Ghana"), let cameroon = window.position(ofRowTitled: "Cameroon"), ghana > cameroon, taps < 5 {
            window.activateRow(titled: "Ghana")
            taps += 1
            XCTAssertTrue(window.rows(inSection: "Africa").contains("> Ghana · Wins: \(taps)"), "Ghana stays selected: \(window.listLines)")
        }
        XCTAssertEqual(taps, 3, "two wins tie with Cameroon (sorted by name), the third overtakes it")
        XCTAssertEqual(window.rows(inSection: "Africa"), [
            "> Ghana · Wins: 3", "  Cameroon · Wins: 2", "  Algeria · Wins: 0", "  Ivory Coast · Wins: 0", "  Nigeria · Wins: 0",
        ])
        XCTAssertEqual(window.listLines.filter { $0.hasPrefix("[") },
                       ["[Africa]", "[Asia]", "[Europe]", "[North/Central America]", "[South America]"])
        XCTAssertEqual(window.detailLines, ["Ghana", "Team name", "Ghana", "Qualifying zone", "Africa", "Wins", "3"],
                       "no image name: it names a picture, which no dataset ships")

        // What GTK shows: header rows styled as headers, the moved row rebound.
        MainLoop.iterate(for: 0.2)
        XCTAssertEqual(Array(window.shownTexts(withClass: "section-header").prefix(2)), ["Africa", "Asia"])
        let headerRows = window.listView.descendants.filter { gtk_widget_has_css_class($0, "section-header-row") != 0 }
        XCTAssertGreaterThanOrEqual(headerRows.count, 2, "the row widgets around headers carry the header class")
        XCTAssertEqual(Array(window.shownTexts(withClass: "row-title").prefix(3)), ["Ghana", "Cameroon", "Algeria"])
        XCTAssertEqual(window.shownTexts(withClass: "row-subtitle").first, "Wins: 3")
        XCTAssertEqual(window.shownTexts(withClass: "avatar").first, "G", "a placeholder image with the team's initial")

        // Saved: another context on the store reads the wins.
        let store = window.session!.context.store
        let ghana = try ObjectContext(store: store).fetch(FetchRequest<ManagedObject>(entityName: "Team", predicate: try FetchPredicate(format: "teamName == 'Ghana'")))
        XCTAssertEqual(ghana.first?.attributeValue(forKey: "wins"), .integer(3))
    } }

    /// A name with line breaks, written by another program, shows whole in its row, on the
    /// row's one line (a row's title shows a line), not as its first line alone.
    func testANameWithLineBreaksShowsWholeOnItsRowsOneLine() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let store = try XCTUnwrap(window.session?.context.store.url)
        try sqlite3(store, "UPDATE Team SET teamName = 'Ghana' || char(10) || 'Black' || char(13, 10, 10) || 'Stars' WHERE teamName = 'Ghana'")
        XCTAssertTrue(MainLoop.iterate(until: { window.object(titled: "Ghana\nBlack\r\n\nStars") != nil }), "the rename shows")
        MainLoop.iterate(for: 0.2)
        XCTAssertTrue(window.shownTexts(withClass: "row-title").contains("Ghana Black Stars"), "\(window.shownTexts(withClass: "row-title"))")
        XCTAssertEqual(window.shownTexts(withClass: "avatar").filter { $0 == "GB" }.count, 1, "the initials of its first two words")
    } }

    func testTheCounterButtonOfARowAddsAWinAndSelectsTheRow() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        MainLoop.iterate(for: 0.2)
        let nigeria = try XCTUnwrap(window.object(titled: "Nigeria"))
        let row = try XCTUnwrap(window.factory?.rowWidget(showing: nigeria.objectID))
        let button = try XCTUnwrap(row.descendants.first { gtk_widget_has_css_class($0, "counter-button") != 0 })
        gtk_widget_activate(button)  // a button clicks once its press animation (250 ms) ends
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "Africa").first == "> Nigeria · Wins: 1" }),
                      "\(window.rows(inSection: "Africa"))")
    } }

    /// Undo of a tap takes its win back, and only it: wins another program added since stay.
    func testUndoOfATapTakesBackOneWinAndKeepsTheWinsAddedElsewhere() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        window.activateRow(titled: "Ghana")
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "Africa").first?.hasSuffix("Ghana · Wins: 1") == true }))
        try sqlite3(storeFolder.appendingPathComponent("worldcup.sqlite"), "UPDATE Team SET wins = wins + 5 WHERE teamName = 'Ghana'")
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "Africa").first?.hasSuffix("Ghana · Wins: 6") == true }),
                      window.listLines.joined(separator: "\n"))
        window.undo()
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "Africa").first?.hasSuffix("Ghana · Wins: 5") == true }),
                      "the tap's win goes, the 5 stay:\n\(window.listLines.joined(separator: "\n"))")
        XCTAssertEqual(try sqlite3(storeFolder.appendingPathComponent("worldcup.sqlite"), "SELECT wins FROM Team WHERE teamName = 'Ghana'"), "5")
    } }

    func testWhenTheSelectedTeamIsDeletedTheNextOneIsSelectedAndAToastSaysSo() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let session = try XCTUnwrap(window.session)
        let cameroon = try XCTUnwrap(window.object(titled: "Cameroon"))
        session.selection.select(cameroon)
        try session.context.delete(cameroon)
        try session.context.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertEqual(window.rows(inSection: "Africa"), ["  Algeria · Wins: 0", "> Ghana · Wins: 0", "  Ivory Coast · Wins: 0", "  Nigeria · Wins: 0"])
        XCTAssertEqual(window.detailLines.first, "Ghana")
        XCTAssertEqual(window.shownToast, "“Cameroon” was deleted", "deleted by code, not an undoable edit of the window")

        // The last team of a section: the one before it.
        let nigeria = try XCTUnwrap(window.object(titled: "Nigeria"))
        session.selection.select(nigeria)
        XCTAssertEqual(window.detailLines.first, "Nigeria")
        try session.context.delete(nigeria)
        try session.context.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertEqual(window.rows(inSection: "Africa").last, "> Ivory Coast · Wins: 0")
    } }

    func testASaveOfAnotherContextReachesTheWindowThroughTheMainQueue() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let store = window.session!.context.store
        // A background context, as an import would use: its save is merged into the window's
        // context on the main queue, which runs only because it is wired into the GLib loop.
        let background = ObjectContext(store: store, queue: DispatchQueue(label: "import"))
        try background.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Team", predicate: try FetchPredicate(format: "teamName == 'Iran'"))
            try background.fetch(request).first!.setValue(7, forKey: "wins")
            try background.save()
        }
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "Asia").first == "  Iran · Wins: 7" }),
                      "the merge moved Iran to the top of Asia: \(window.rows(inSection: "Asia"))")
    } }

    /// Another program moves the selected team, whose row has the keyboard focus, far out of
    /// view: the list stays where the person put it (GTK gives the focus of the dropped row
    /// to another widget, and the window takes it back only to a row on screen).
    func testAChangeFromElsewhereThatMovesTheFocusedRowAwayLeavesTheListWhereItIs() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let nigeria = try XCTUnwrap(window.object(titled: "Nigeria"))
        window.session!.selection.select(nigeria)
        let row = try XCTUnwrap(window.factory?.rowWidget(showing: nigeria.objectID))
        gtk_widget_grab_focus(row)
        MainLoop.iterate(for: 0.2)
        XCTAssertTrue(gtk_root_get_focus(OpaquePointer(window.window)) == row, "Nigeria's row has the focus")
        let adjustment = gtk_scrolled_window_get_vadjustment(OpaquePointer(gtk_widget_get_parent(window.listView)))
        let top = gtk_adjustment_get_value(adjustment)

        let background = ObjectContext(store: window.session!.context.store, queue: DispatchQueue(label: "elsewhere"))
        try background.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Team", predicate: try FetchPredicate(format: "teamName == 'Nigeria'"))
            try background.fetch(request).first!.setValue("South America", forKey: "qualifyingZone")
            try background.save()
        }
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "South America").contains("> Nigeria · Wins: 0") }),
                      "Nigeria moved, still selected: \(window.listLines)")
        MainLoop.iterate(for: 0.3)
        XCTAssertEqual(gtk_adjustment_get_value(adjustment), top, "the list did not scroll")
        XCTAssertNil(window.factory?.rowWidget(showing: nigeria.objectID).flatMap { gtk_widget_get_mapped($0) != 0 ? $0 : nil },
                     "Nigeria's row is out of view")
    } }

    /// A search that does not match the selected team selects the first match, with the
    /// list at its top (it used to select the last match and scroll to the bottom); one
    /// that matches it keeps it.
    func testASearchLandsOnTheFirstMatchUnlessTheSelectedTeamMatches() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        window.session?.selection.select(window.object(titled: "Uruguay"))
        MainLoop.iterate(for: 0.3)
        gtk_editable_set_text(OpaquePointer(window.searchEntry), "ia")
        XCTAssertTrue(MainLoop.iterate(until: { window.listLines.count < 20 }), "the search shows its rows")
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "Africa").first == "> Algeria · Wins: 0" }),
                      "the first match is selected: \(window.listLines)")
        MainLoop.iterate(for: 0.3)
        let adjustment = gtk_scrollable_get_vadjustment(OpaquePointer(window.listView))
        XCTAssertEqual(gtk_adjustment_get_value(adjustment), 0, "the list shows its top, the first section's header")
        XCTAssertEqual(window.session?.selection.selectedObject.map { ViewConfiguration.render(window.session!.view.row.title, for: $0) }, "Algeria")

        // Croatia matches the next search too: it stays selected.
        window.session?.selection.select(window.object(titled: "Croatia"))
        gtk_editable_set_text(OpaquePointer(window.searchEntry), "a")
        XCTAssertTrue(MainLoop.iterate(until: { window.listLines.count > 20 }), "the wider search shows its rows")
        MainLoop.iterate(for: 0.3)
        XCTAssertTrue(window.rows(inSection: "Europe").contains("> Croatia · Wins: 0"), "\(window.listLines)")
    } }

    /// While a search is fetched, the rows shown are the old request's: a spinner spins in
    /// the search bar and the rows are dimmed and busy (for a screen reader) until the
    /// results are shown; then the spinner goes.
    func testWhileASearchIsFetchedASpinnerTurnsAndTheOldRowsAreDimmedAndBusy() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        XCTAssertFalse(window.fetchProgress.spinner.isVisible)
        gtk_search_bar_set_search_mode(window.searchBar.opaque, 1)
        // Looked at as the search begins: after the window's own handler of the signal.
        var sawProgress = false
        Signal.connect(window.searchEntry.object, "search-changed") { () -> Void in
            sawProgress = true
            XCTAssertGreaterThan(window.listLines.count, 20, "the rows are still the old ones")
            XCTAssertTrue(window.fetchProgress.spinner.isVisible, "the spinner shows while the rows are the old ones")
            XCTAssertEqual(gtk_spinner_get_spinning(window.fetchProgress.spinner.opaque), 1)
            XCTAssertEqual(gtk_widget_has_css_class(window.listStack, "stale-rows"), 1, "the old rows are dimmed")
        }
        gtk_editable_set_text(OpaquePointer(window.searchEntry), "ia")
        XCTAssertTrue(MainLoop.iterate(until: { window.listLines.count < 20 && !window.fetchProgress.isBusy }))
        XCTAssertFalse(window.fetchProgress.spinner.isVisible, "the spinner goes once the results are shown")
        XCTAssertEqual(gtk_widget_has_css_class(window.listStack, "stale-rows"), 0)
        XCTAssertTrue(sawProgress, "the search showed its progress before its rows")
    } }

    func testSearchFiltersTheRowsAndSortOptionsReorderThem() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        // Every new request reloads the list, as a search or a new order does past 20,000 rows.
        window.session?.controller.reloadThreshold = 1
        window.activateRow(titled: "Nigeria")
        gtk_editable_set_text(OpaquePointer(window.searchEntry), "ia")
        XCTAssertTrue(MainLoop.iterate(until: { window.listLines.count < 20 }), "the search entry reports its text after a short delay")
        let titles = window.listLines.filter { !$0.hasPrefix("[") }.map { $0.dropFirst(2).components(separatedBy: " · ")[0] }
        XCTAssertEqual(titles, ["Nigeria", "Algeria", "Australia", "Bosnia and Herzegovina", "Croatia", "Russia", "Colombia"])
        XCTAssertEqual(window.listLines.filter { $0.hasPrefix("[") }, ["[Africa]", "[Asia]", "[Europe]", "[South America]"],
                       "sections without a match are gone")
        XCTAssertEqual(window.rows(inSection: "Africa").first, "> Nigeria · Wins: 1", "the selected team matches and stays selected")

        // The primary menu's "By name", a radio item of win.sort.
        gtk_widget_activate_action_variant(window.window, "win.sort", g_variant_new_int32(1))
        MainLoop.iterate(until: { window.rows(inSection: "Africa").first == "  Algeria · Wins: 0" })
        XCTAssertEqual(window.rows(inSection: "Africa"), ["  Algeria · Wins: 0", "> Nigeria · Wins: 1"])
        // A reload keeps GTK's row widgets: each shows its new team.
        MainLoop.iterate()
        XCTAssertEqual(shownTitles(window), listedTitles(window, count: shownTitles(window).count), "the rows drawn after a new sort")

        gtk_editable_set_text(OpaquePointer(window.searchEntry), "")
        XCTAssertTrue(MainLoop.iterate(until: { window.listLines.count == 37 }), "32 teams and 5 zones again")
        gtk_widget_activate_action_variant(window.window, "win.sort", g_variant_new_int32(0))
        MainLoop.iterate(until: { window.rows(inSection: "Africa").first == "> Nigeria · Wins: 1" })
        MainLoop.iterate()
        let shown = shownTitles(window)
        XCTAssertGreaterThan(shown.count, 5)
        XCTAssertEqual(shown, listedTitles(window, count: shown.count), "the rows drawn after the first order again")
    } }

    /// The titles of the object rows GTK draws, top to bottom.
    @MainActor private func shownTitles(_ window: ViewerWindow) -> [String] {
        window.layoutDump.split(separator: "\n").filter { !$0.hasPrefix("list @") && !$0.hasPrefix("window @") && !$0.hasPrefix("[") }.map { line in
            let parts = line.components(separatedBy: " @ ")
            return (title: parts[0], y: Int(parts[1].split(separator: " ")[1])!)
        }.sorted { $0.y < $1.y }.map(\.title)
    }

    /// The titles of the first `count` objects of the list.
    @MainActor private func listedTitles(_ window: ViewerWindow, count: Int) -> [String] {
        Array(window.listLines.filter { !$0.hasPrefix("[") }.map { $0.dropFirst(2).components(separatedBy: " · ")[0] }.prefix(count))
    }

    func testTheDatasetSwitcherOpensAnotherDataset() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let movies = try XCTUnwrap(Dataset.shipped.firstIndex(of: "movies"))
        gtk_drop_down_set_selected(window.datasetChoice.opaque, guint(movies))
        MainLoop.iterate(for: 0.2)
        XCTAssertEqual(String(cString: gtk_window_get_title(window.window.cast())), "Movies")
        XCTAssertEqual(window.listLines.first, "[Lent]")
        XCTAssertTrue(window.searchButton.isVisible)
        XCTAssertTrue(FileManager.default.fileExists(atPath: storeFolder.appendingPathComponent("movies.sqlite").path))
    } }

    func testTheWindowRendersToAPNG() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let url = storeFolder.appendingPathComponent("window.png")
        try Screenshot.save(window.window, to: url)
        let png = try Data(contentsOf: url)
        XCTAssertEqual(Array(png.prefix(4)), [0x89, 0x50, 0x4E, 0x47])
        let width = png[16..<20].reduce(0) { $0 << 8 | Int($1) }, height = png[20..<24].reduce(0) { $0 << 8 | Int($1) }
        XCTAssertEqual(width, Int(gtk_widget_get_width(window.window)))
        XCTAssertEqual(height, Int(gtk_widget_get_height(window.window)))
    } }
}
