import CGtk
import GtkBinding
import Datasets
import Foundation
import ObjectStore
@testable import Viewer
import XCTest

/// Another program holding the store's write lock while the person taps: the tap is kept,
/// the window says so, and it is saved once the lock is free.
final class BusyStoreTests: ViewerTestCase, @unchecked Sendable {
    func testATapThatFindsTheStoreLockedIsKeptAndSavedWhenTheLockIsFree() throws { try MainActor.assumeIsolated {
        let window = try openWindow(busyTimeout: 0.1)
        let store = storeFolder.appendingPathComponent("worldcup.sqlite")
        let holder = try sqlite3HoldingWriteLock(of: store, running: "UPDATE Team SET wins = 7 WHERE teamName = 'Japan'", for: 1.5)

        window.activateRow(titled: "Ghana")
        MainLoop.iterate(for: 0.3)
        XCTAssertTrue(window.banner.isVisible)
        let message = labelText(window.banner)
        XCTAssertTrue(message.hasPrefix("Not saved yet: another program is writing to the store"), message)
        XCTAssertEqual(window.rows(inSection: "Africa").first, "> Ghana · Wins: 1", "the tap shows, unsaved")
        XCTAssertTrue(window.session!.context.hasChanges)

        holder.waitUntilExit()
        XCTAssertTrue(MainLoop.iterate(until: { !window.session!.context.hasChanges }, timeout: 5), "saved once the lock is free")
        XCTAssertFalse(window.banner.isVisible, "the note goes once saved")
        let saved = try ObjectContext(store: PersistentStore(url: store, model: window.session!.dataset.model))
            .fetch(FetchRequest<ManagedObject>(entityName: "Team", predicate: try FetchPredicate(format: "teamName IN {'Ghana', 'Japan'}"),
                                               sortDescriptors: [FetchSortDescriptor(key: "teamName")]))
        XCTAssertEqual(saved.map { $0.attributeValue(forKey: "wins") }, [.integer(1), .integer(7)])
    } }
}
