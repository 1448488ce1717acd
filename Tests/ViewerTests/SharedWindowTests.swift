import CAdw
import CGtk
import Datasets
import Foundation
import GtkBinding
import ObjectStore
import Sharing
@testable import Viewer
import XCTest

/// A window on a store that shares through PostgreSQL: another desktop's change shows in the
/// list, the header bar's indicator says how the store stands with its server, Share… and Stop
/// Sharing, and a toast for an edit that met another desktop's.
final class SharedWindowTests: ViewerTestCase, @unchecked Sendable {
    /// Another desktop: a World Cup store of its own sharing through `url`, caught up.
    private func otherDesktop(_ file: String, sharingThrough url: String) throws -> (url: URL, store: PersistentStore, session: SharingSession) {
        let storeURL = storeFolder.appendingPathComponent(file)
        let store = try Dataset.load(named: "worldcup").openStore(at: storeURL)
        let session = try store.share(through: PostgresSharing(try ServerConfiguration(url: url)))
        try waiting { try await session.synchronize() }
        return (storeURL, store, session)
    }

    private func stop(_ session: SharingSession) throws {
        try waiting { await session.stop() }
    }

    func testAChangeOnAnotherDesktopShowsInTheWindowAndTheIndicatorSaysShared() throws { try MainActor.assumeIsolated {
        let url = try SharingServer.database(for: self)
        let window = try openWindow(shareURL: url)
        let shared = "Shared through \(try ServerConfiguration(url: url))"
        XCTAssertTrue(MainLoop.iterate(until: { window.sharingIndicator.text == shared }, timeout: 20), window.sharingIndicator.text ?? "hidden")
        XCTAssertTrue(window.sharingIndicator.widget.isVisible)
        XCTAssertEqual(String(cString: gtk_widget_get_tooltip_text(window.sharingIndicator.widget)), shared)
        XCTAssertEqual(window.textDump.split(separator: "\n").last.map(String.init), "sharing: \(shared)")
        // The test server takes TLS; the address does not ask to check its certificate.
        XCTAssertEqual(window.sharingIndicator.securityText, "Encrypted. The server's certificate is not checked (sslmode=verify-full checks it).")
        XCTAssertFalse(Action.isEnabled(window.shareAction), "Share… does not apply")
        XCTAssertTrue(Action.isEnabled(window.stopSharingAction))

        // The window seeded the empty database; another desktop takes its teams and changes one.
        let other = try otherDesktop("other.sqlite", sharingThrough: url)
        _ = try sqlite3(other.url, "UPDATE Team SET wins = 42 WHERE teamName = 'Ghana'")
        try waiting { try await other.session.synchronize() }  // committed on the server
        let pushed = Date()
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "Africa").first?.hasSuffix("Ghana · Wins: 42") == true }, timeout: 10),
                      window.listLines.joined(separator: "\n"))
        print("another desktop's change shown \(Int(Date().timeIntervalSince(pushed) * 1000)) ms after it was committed on the server")
        XCTAssertEqual(window.sharingIndicator.text, shared)

        // And the window's taps go the other way.
        window.activateRow(titled: "Algeria")
        XCTAssertTrue(MainLoop.iterate(until: { (try? sqlite3(other.url, "SELECT wins FROM Team WHERE teamName = 'Algeria'")) == "1" }, timeout: 10),
                      "the other desktop takes the window's tap")
        XCTAssertEqual(window.sharingIndicator.text, shared, "nothing waits")
        try stop(other.session)
    } }

    /// A window joining a database of 40,032 teams (40,000 written on the server with SQL)
    /// shows the first rows while it takes the rest, with a progress bar under the header
    /// bar that says how far it got and goes once every row is in.
    func testJoiningABigDatabaseShowsTheFirstRowsAndAProgressBarUntilEveryRowIsIn() throws { try MainActor.assumeIsolated {
        let url = try SharingServer.database(for: self)
        let other = try otherDesktop("other.sqlite", sharingThrough: url)
        try stop(other.session)
        try SharingServer.run("""
            INSERT INTO "Team" ("Z_ID", "teamName", "qualifyingZone", wins)
            SELECT gen_random_uuid(), 'Team ' || n, 'Asia', n % 7 FROM generate_series(1, 40000) n
            """, on: try ServerConfiguration(url: url))
        let window = try openWindow(shareURL: url)
        let indicator = window.sharingIndicator
        let count = { window.session?.controller.numberOfObjects ?? 0 }
        XCTAssertTrue(MainLoop.iterate(until: { indicator.progressText != nil && count() > 32 }, timeout: 60),
                      "rows shown while the join goes on: \(count()) rows, \(indicator.progressText ?? "no progress bar")")
        let text = try XCTUnwrap(indicator.progressText)
        XCTAssertTrue(text.hasPrefix("Taking ") && text.hasSuffix(" of 40,032 rows from the server"), text)
        XCTAssertTrue(indicator.progressBar.isVisible)
        let fraction = gtk_progress_bar_get_fraction(indicator.progressBar.opaque)
        XCTAssertTrue(fraction > 0 && fraction < 1, "\(fraction)")
        XCTAssertEqual(String(cString: gtk_progress_bar_get_text(indicator.progressBar.opaque)), text)
        XCTAssertTrue(indicator.text?.hasSuffix(", " + text.prefix(1).lowercased() + text.dropFirst()) == true, indicator.text ?? "hidden")
        if let folder = ProcessInfo.processInfo.environment["VIEWER_SCREENSHOTS"] {
            try Screenshot.save(window.window, to: URL(fileURLWithPath: folder).appendingPathComponent("joining.png"))
        }

        let shared = "Shared through \(try ServerConfiguration(url: url))"
        XCTAssertTrue(MainLoop.iterate(until: { indicator.text == shared && count() == 40_032 }, timeout: 120),
                      "\(count()) rows, \(indicator.text ?? "hidden")")
        XCTAssertFalse(indicator.progressBar.isVisible)
        XCTAssertNil(indicator.progressText)
    } }

    func testAnUnreachableServerShowsOfflineWithTheChangesWaitingAndStopSharingForgetsIt() throws { try MainActor.assumeIsolated {
        // The store joined a database (it has nothing to send), which is now out of reach.
        let joined = try otherDesktop("worldcup.sqlite", sharingThrough: try SharingServer.database(for: self))
        try stop(joined.session)
        let window = try openWindow(shareURL: try SharingServer.closedPortURL())
        XCTAssertTrue(MainLoop.iterate(until: { window.sharingIndicator.text == "Offline" }, timeout: 10), window.sharingIndicator.text ?? "hidden")
        window.activateRow(titled: "Ghana")
        window.activateRow(titled: "Japan")
        XCTAssertTrue(MainLoop.iterate(until: { window.sharingIndicator.text == "Offline, 2 changes waiting" }, timeout: 10),
                      window.sharingIndicator.text ?? "hidden")
        XCTAssertEqual(String(cString: gtk_widget_get_tooltip_text(window.sharingIndicator.widget)), "Offline, 2 changes waiting")
        XCTAssertTrue(window.rows(inSection: "Africa").first?.hasSuffix("Ghana · Wins: 1") == true, "offline, the window works on its store")

        let store = try XCTUnwrap(window.session?.context.store)
        XCTAssertNotNil(try store.sharingServer())
        window.stopSharing()
        XCTAssertFalse(window.sharingIndicator.widget.isVisible)
        XCTAssertTrue(MainLoop.iterate(until: { (try? store.sharingServer()) == .some(nil) }), "the store forgets its server")
        XCTAssertTrue(Action.isEnabled(window.shareAction))
        XCTAssertFalse(Action.isEnabled(window.stopSharingAction))
        XCTAssertFalse(window.textDump.contains("sharing:"))
    } }

    func testTheShareDialogSaysWhatIsWrongWithTheAddressAndSharesTheListShown() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        XCTAssertFalse(window.sharingIndicator.widget.isVisible, "hidden while the store does not share")
        XCTAssertTrue(Action.isEnabled(window.shareAction))
        XCTAssertFalse(Action.isEnabled(window.stopSharingAction))
        window.session?.selection.select(window.object(titled: "Japan"))
        let shown = try XCTUnwrap(window.session)
        // An address the dialog would refuse, given directly: said in the banner, nothing shared.
        window.share(through: "http://me@db.example/league")
        XCTAssertTrue(window.banner.isVisible)
        XCTAssertTrue(labelText(window.banner).hasPrefix("Not shared: "), labelText(window.banner))
        XCTAssertNil(window.session?.sharing)
        XCTAssertTrue(Action.isEnabled(window.shareAction))
        gtk_widget_activate_action_variant(window.window, "win.share", nil)
        MainLoop.iterate(for: 0.1)
        let dialog = try XCTUnwrap(window.shareDialog)
        let type = dialog.window.cast() as UnsafeMutablePointer<AdwMessageDialog>
        let canShare = { adw_message_dialog_get_response_enabled(type, "share") != 0 }
        XCTAssertFalse(canShare(), "nothing typed yet")
        XCTAssertFalse(dialog.message.isVisible)
        for (typed, problem) in [("http://me@db.example/league", "not a postgresql:// URL"), ("postgresql://me@db.example/", "no database"),
                                 ("postgresql://db.example/league", "no user")] {
            gtk_editable_set_text(OpaquePointer(dialog.entry), typed)
            XCTAssertTrue(dialog.message.isVisible, typed)
            XCTAssertEqual(labelText(dialog.message), "Not a server address: \(problem). Write postgresql://USER@HOST[:PORT]/DATABASE")
            XCTAssertFalse(canShare(), typed)
        }
        let url = try SharingServer.closedPortURL()
        gtk_editable_set_text(OpaquePointer(dialog.entry), url)
        XCTAssertFalse(dialog.message.isVisible)
        XCTAssertTrue(canShare())
        adw_message_dialog_response(type, "share")
        XCTAssertTrue(MainLoop.iterate(until: { window.sharingIndicator.text?.hasPrefix("Offline, 32 changes waiting") == true }, timeout: 10),
                      "the seed waits for the server: " + (window.sharingIndicator.text ?? "hidden"))
        XCTAssertEqual(window.session?.selection.selectedObject.map { $0.attributeValue(forKey: "teamName") }, .string("Japan"), "the selection stays")
        XCTAssertTrue(window.session === shown, "shared in place: the store, the list and the selection are the ones shown, not opened again")
        XCTAssertFalse(window.banner.isVisible, "once shared, the banner no longer says it could not: \(labelText(window.banner))")
        XCTAssertEqual(try window.session?.context.store.sharingServer(), try ServerConfiguration(url: url).description)
        XCTAssertFalse(Action.isEnabled(window.shareAction))
    } }

    func testAnEditThatMetAnotherDesktopsShowsAToastAndDismissingItForgetsTheConflict() throws { try MainActor.assumeIsolated {
        let url = try SharingServer.database(for: self)
        // This desktop's store shares once and stops; the other desktop then moves Ghana
        // to Asia, and this one to Europe before it shares again. (Wins are a counter: taps
        // on both desktops add up, never conflict.)
        let mine = try otherDesktop("worldcup.sqlite", sharingThrough: url)
        try stop(mine.session)
        let other = try otherDesktop("other.sqlite", sharingThrough: url)
        _ = try sqlite3(other.url, "UPDATE Team SET qualifyingZone = 'Asia', wins = wins + 7 WHERE teamName = 'Ghana'")
        try waiting { try await other.session.synchronize() }
        try stop(other.session)
        _ = try sqlite3(mine.url, "UPDATE Team SET qualifyingZone = 'Europe', wins = wins + 1 WHERE teamName = 'Ghana'")

        let window = try openWindow()  // the store remembers its server
        let text = "Ghana: Qualifying zone was changed on another desktop; kept theirs"
        XCTAssertTrue(MainLoop.iterate(until: { window.shownToast == text }, timeout: 20), window.shownToast ?? "no toast")
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "Asia").contains { $0.hasSuffix("Ghana · Wins: 8") } }),
                      window.listLines.joined(separator: "\n"))
        let sharing = try XCTUnwrap(window.session?.sharing)
        let conflict = try XCTUnwrap(sharing.session.conflicts().first)
        XCTAssertEqual(window.toastedConflicts[conflict.number!], [conflict], "Details has it")
        gtk_widget_activate_action_variant(window.window, "win.sharing-conflicts", g_variant_new_int32(Int32(conflict.number!)))
        let details = try XCTUnwrap(dialog(of: window), "Details opens a dialog")
        XCTAssertEqual(String(cString: adw_message_dialog_get_body(details.cast())),
                       "\(text).\nqualifyingZone is \"Asia\" on the server (it was \"Africa\" when the edit here began, which set \"Europe\").")
        gtk_window_destroy(details.cast())

        // The toast's close button, its last (after Details).
        let toast = try XCTUnwrap(window.toastOverlay.descendants.first { String(cString: gtk_widget_get_css_name($0)) == "toast" })
        let close = try XCTUnwrap(toast.descendants.last { $0.isA(gtk_button_get_type()) })
        gtk_widget_activate(close)
        XCTAssertTrue(MainLoop.iterate(until: { (try? sharing.session.conflicts()) == [] }, timeout: 1), "dismissed")
        XCTAssertNil(window.shownToast)
    } }

    /// Two desktops' windows sharing one server, each tapping Ghana's row ten times, in
    /// turn and without waiting: both stores and both lists end at 20 wins, and no conflict
    /// says a tap was lost (before counters, both desktops wrote the same new value and
    /// about half the taps were gone without a word).
    func testTwoWindowsTappingTheSameTeamBothCountEveryTap() throws { try MainActor.assumeIsolated {
        let url = try SharingServer.database(for: self)
        let a = try openWindow(shareURL: url)
        XCTAssertTrue(MainLoop.iterate(until: { a.sharingIndicator.text?.hasPrefix("Shared through") == true }, timeout: 20))
        let b = try openWindow(shareURL: url, storeFolder: try temporaryFolder(self))
        XCTAssertTrue(MainLoop.iterate(until: { b.sharingIndicator.text?.hasPrefix("Shared through") == true }, timeout: 20))
        for _ in 0..<10 {
            a.activateRow(titled: "Ghana")
            b.activateRow(titled: "Ghana")
        }
        for (name, window) in [("A", a), ("B", b)] {
            XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "Africa").contains { $0.hasSuffix("Ghana · Wins: 20") } }, timeout: 20),
                          "\(name) shows every tap:\n\(window.listLines.joined(separator: "\n"))")
            // No toast at all: not about taps, and not about B's joining, which gives its
            // seed up for the server's teams (its selected team replaced by the same team).
            XCTAssertNil(window.shownToast, name)
            XCTAssertEqual(try window.session?.sharing?.session.conflicts(), [], name)
        }
    } }

    /// A row that breaks the model, written on the server with SQL (an empty name where the
    /// model has `minLength: 1`), reaches no list: a toast says what was not taken, Details
    /// says why, and changes made afterwards still arrive.
    func testARowThatBreaksTheModelOnTheServerShowsAToastAndReachesNoList() throws { try MainActor.assumeIsolated {
        let url = try SharingServer.database(for: self)
        let window = try openWindow(shareURL: url)
        XCTAssertTrue(MainLoop.iterate(until: { window.sharingIndicator.text?.hasPrefix("Shared through") == true }, timeout: 20),
                      window.sharingIndicator.text ?? "hidden")
        let server = try ServerConfiguration(url: url)
        try SharingServer.run(#"UPDATE "Team" SET "teamName" = '' WHERE "teamName" = 'Ghana'"#, on: server)
        let text = "A change of “Ghana” from the server was not taken: Team name must not be empty"
        XCTAssertTrue(MainLoop.iterate(until: { window.shownToast == text }, timeout: 20), window.shownToast ?? "no toast")
        XCTAssertTrue(window.rows(inSection: "Africa").contains { $0.hasSuffix("Ghana · Wins: 0") }, window.listLines.joined(separator: "\n"))

        let sharing = try XCTUnwrap(window.session?.sharing)
        let rejected = try XCTUnwrap(sharing.session.rejectedChanges().first)
        gtk_widget_activate_action_variant(window.window, "win.sharing-rejected", g_variant_new_int32(Int32(rejected.number!)))
        let details = try XCTUnwrap(dialog(of: window), "Details opens a dialog")
        XCTAssertEqual(String(cString: adw_message_dialog_get_body(details.cast())), "\(text).\n\(rejected).")
        gtk_window_destroy(details.cast())

        try SharingServer.run(#"UPDATE "Team" SET wins = 3 WHERE "teamName" = 'Japan'"#, on: server)
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "Asia").first?.hasSuffix("Japan · Wins: 3") == true }, timeout: 10),
                      "a later change arrives:\n\(window.listLines.joined(separator: "\n"))")
        XCTAssertTrue(window.sharingIndicator.text?.hasPrefix("Shared through") == true, window.sharingIndicator.text ?? "hidden")
    } }

    /// A role that may only read the shared list (GRANT SELECT, a password): its window shows
    /// the list and what others change, says "Read-only" and why, and offers no edit: Add,
    /// Edit, Delete and Undo are off, and a tap is refused with a toast, its store unchanged.
    func testARoleThatMayOnlyReadSeesTheListAndIsOfferedNoEdit() throws { try MainActor.assumeIsolated {
        let url = try SharingServer.database(for: self)
        let owner = try otherDesktop("owner.sqlite", sharingThrough: url)
        let server = try ServerConfiguration(url: url)
        let role = "reader_\(UInt32.random(in: 0..<UInt32.max))"
        try SharingServer.run("CREATE ROLE \(role) LOGIN PASSWORD 'reader-pass' IN ROLE password_users", on: server)
        try SharingServer.run("GRANT SELECT ON ALL TABLES IN SCHEMA public TO \(role)", on: server)
        let readerURL = url.replacingOccurrences(of: "//\(server.username)@", with: "//\(role):reader-pass@")
        let window = try openWindow(shareURL: readerURL)
        XCTAssertTrue(MainLoop.iterate(until: { window.sharingIndicator.text?.hasSuffix(", read-only") == true }, timeout: 20),
                      window.sharingIndicator.text ?? "hidden")
        XCTAssertFalse(window.sharingIndicator.text?.contains("reader-pass") ?? true, "no password shown")
        for button in [window.addButton, window.editButton, window.deleteButton, window.undoButton] {
            XCTAssertEqual(gtk_widget_get_sensitive(button), 0, "no edit is offered")
        }
        window.activateRow(titled: "Algeria")
        XCTAssertEqual(window.shownToast, "Read-only: \(role) may only read the shared list on this server")
        MainLoop.iterate(for: 0.3)
        XCTAssertTrue(window.rows(inSection: "Africa").contains { $0.hasSuffix("Algeria · Wins: 0") }, window.listLines.joined(separator: "\n"))
        XCTAssertEqual(window.session?.sharing?.status.pendingChanges, 0, "nothing was saved to wait")

        _ = try sqlite3(owner.url, "UPDATE Team SET wins = 5 WHERE teamName = 'Ghana'")
        try waiting { try await owner.session.synchronize() }
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "Africa").first?.hasSuffix("Ghana · Wins: 5") == true }, timeout: 10),
                      "the owner's change arrives:\n\(window.listLines.joined(separator: "\n"))")

        // Searching and sorting are no edits: a read-only desktop does both.
        window.shownToast = nil
        gtk_editable_set_text(OpaquePointer(window.searchEntry), "gha")
        XCTAssertTrue(MainLoop.iterate(until: { window.listLines == ["[Africa]", "> Ghana · Wins: 5"] }, timeout: 10), window.listLines.joined(separator: "\n"))
        gtk_editable_set_text(OpaquePointer(window.searchEntry), "")
        gtk_widget_activate_action_variant(window.window, "win.sort", g_variant_new_int32(1))
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "Africa").first?.hasSuffix("Algeria · Wins: 0") == true }, timeout: 10),
                      "sorted by name:\n\(window.listLines.joined(separator: "\n"))")
        XCTAssertNil(window.shownToast, "no read-only refusal")
        try stop(owner.session)
        window.session?.sharing?.stop()
        try SharingServer.run("DROP OWNED BY \(role)", on: server)
    } }

    /// The window `window` opened last (a dialog transient for it).
    @MainActor private func dialog(of window: ViewerWindow) -> Widget? {
        let toplevels = gtk_window_get_toplevels()!
        return (0..<g_list_model_get_n_items(toplevels)).reversed().lazy.compactMap { index -> Widget? in
            let item = g_list_model_get_item(toplevels, index)!
            defer { g_object_unref(item) }
            let widget = item.assumingMemoryBound(to: GtkWidget.self)
            return gtk_window_get_transient_for(widget.cast()) == window.window.cast() ? widget : nil
        }.first
    }
}
