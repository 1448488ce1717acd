import FetchedResults
import Foundation
import ObjectStore

/// A new request on the viewer's controller, as the viewer sets one: a search typed, a
/// predicate, another sort. Each through `setFetchRequest(_:completion:)` on a main-queue
/// context, beside a fresh `performFetch()` of the same request: how long until the list
/// shows the results, and the longest the main queue was kept from running meanwhile.
struct RequestChangeBenchmark {
    let store: PersistentStore

    struct Figures {
        var name: String
        /// From the call to the completion (the results shown).
        var shown: Double
        /// A fresh controller's performFetch() of the same request.
        var freshFetch: Double
        /// The longest gap between two ticks of a 2 ms main-queue timer during the change.
        var longestStall: Double
        var rows: Int
        var isSearch: Bool { name.hasPrefix("typing a search") }
    }

    /// Takes whole batches, as GtkBinding's list model does.
    final class Listener: FetchedResultsControllerDelegate {
        typealias Result = ManagedObject
        func controller(_ controller: FetchedResultsController<ManagedObject>, didChangeContentWith batch: ChangeBatch) {}
    }

    func run() throws -> [Figures] {
        let context = ObjectContext(store: store)
        let controller = FetchedResultsController(fetchRequest: WorldCupStore.request, managedObjectContext: context,
                                                  sectionNameKeyPath: WorldCupStore.sectionNameKeyPath)
        let listener = Listener()
        controller.delegate = listener
        controller.changeReporting = .batches
        try controller.performFetch()
        var search = WorldCupStore.request
        search.predicate = try FetchPredicate(format: "teamName CONTAINS[cd] 'ka'")
        var wins = WorldCupStore.request
        wins.predicate = try FetchPredicate(format: "wins > 25")
        var byName = WorldCupStore.request
        byName.sortDescriptors = [FetchSortDescriptor(key: "qualifyingZone"), FetchSortDescriptor(key: "teamName")]
        var figures: [Figures] = []
        for (name, request) in [("typing a search (teamName CONTAINS[cd] 'ka')", search), ("a predicate (wins > 25)", wins), ("a sort (by name)", byName)] {
            let (shown, stall) = try change(controller, to: request)
            let fresh = FetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                 sectionNameKeyPath: WorldCupStore.sectionNameKeyPath)
            let freshFetch = try Measure.seconds { try fresh.performFetch() }
            guard fresh.snapshot == controller.snapshot else { throw OptionsError("after \(name) the list differs from a fresh fetch") }
            figures.append(Figures(name: name, shown: shown, freshFetch: freshFetch, longestStall: stall, rows: controller.numberOfObjects))
            _ = try change(controller, to: WorldCupStore.request)   // back to the whole list
        }
        return figures
    }

    /// Sets `request` in the background and runs the main queue until it is shown.
    private func change(_ controller: FetchedResultsController<ManagedObject>, to request: FetchRequest<ManagedObject>) throws -> (Double, Double) {
        var ticks: [UInt64] = [DispatchTime.now().uptimeNanoseconds]
        let timer = DispatchSource.makeTimerSource(queue: .main)
        timer.schedule(deadline: .now(), repeating: .milliseconds(2))
        timer.setEventHandler { MainActor.assumeIsolated { ticks.append(DispatchTime.now().uptimeNanoseconds) } }
        timer.resume()
        var done = false, failure: Error?
        let start = DispatchTime.now().uptimeNanoseconds
        controller.setFetchRequest(request) { error in
            failure = error
            done = true
        }
        var end = start
        while !done { RunLoop.current.run(mode: .default, before: Date().addingTimeInterval(0.001)) }
        end = DispatchTime.now().uptimeNanoseconds
        ticks.append(end)
        timer.cancel()
        if let failure { throw failure }
        let gaps = zip(ticks.dropFirst(), ticks).map { Double($0 - $1) / 1e9 }
        return (Double(end - start) / 1e9, gaps.max() ?? 0)
    }
}
