import ArgumentParser
import Datasets
import FetchedResults
import Foundation
import ObjectStore

/// `watch`: follows the store and prints each change batch of the dataset's controller as
/// it happens, whoever commits the change (`apply`, the viewer, the `sqlite3` shell).
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print each change batch of the dataset's list as other processes change the store.",
        discussion: """
            First prints the sections at start, {"sections":[{"name":N,"count":C},...]}; then,
            for every change committed to the store by another process or SQLite client, the
            batch in the format of `apply`: {"changes":[...],"sections":[...]}.
            Runs until interrupted (SIGINT or SIGTERM end it with status 0).
            """)

    @OptionGroup var options: DatasetOptions

    @OptionGroup var sharing: SharingOptions

    func run() throws {
        let (dataset, store) = try options.open()
        let session = try sharing.start(store)
        let context = ObjectContext(store: store)
        let controller = try dataset.makeController(context: context)
        let printer = Printer(context: context)
        controller.delegate = printer
        try controller.performFetch()
        // Every commit to the store (another process's, the sharing engine's pulled rows)
        // reaches the controller as it happens, through the store's change feed.
        let following = try context.followStore()
        printJSON(["sections": BatchJSON.sections(controller.snapshot)])
        let signals = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .main)
            source.setEventHandler { Foundation.exit(0) }
            source.resume()
            return source
        }
        withExtendedLifetime((controller, printer, following, signals, session)) { dispatchMain() }
    }

    final class Printer: FetchedResultsControllerDelegate {
        let context: ObjectContext
        init(context: ObjectContext) { self.context = context }

        func controller(_ controller: FetchedResultsController<ManagedObject>, didChangeContentWith batch: ChangeBatch) {
            printJSON(BatchJSON.line(batch, sections: controller.snapshot))
        }
    }
}
