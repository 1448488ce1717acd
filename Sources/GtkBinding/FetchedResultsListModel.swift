import CFetchedResultsModel
import CGtk
import FetchedResults
import Foundation
import ObjectStore

/// A GListModel that shows a `FetchedResultsController`'s sections in a GTK list view and
/// follows its changes.
///
/// The list is flattened: each section is one header item followed by one item per object.
/// A controller without sections (no `sectionNameKeyPath` and no section fetch request) shows
/// its objects only, without a header. Items are `FrRow` GObjects made only when GTK asks for
/// a position, and the row keys are the controller's own arrays (shared, not copied, also
/// after each batch), so a million-row controller costs neither a million GObjects nor a
/// copy of its keys. While GTK holds an item, asking again for its position (moved by
/// changes before it) gives the same `FrRow`, until an emission announces that position.
///
/// The list model becomes the controller's delegate and turns each `ChangeBatch` into
/// `items-changed` emissions. After every single emission the list is in a valid state on the
/// way from the old sections to the new ones: removals at their old positions, then sections,
/// then insertions at their new positions, as `ChangeBatch/applied(to:)` does. An updated
/// object, a renamed section and an object saved for the first time (its ID turns permanent)
/// are announced as replaced (`items-changed(position, 1, 1)`) so that GTK binds their rows
/// again. Every announced item is a new `FrRow`, so `GtkSingleSelection` loses the selection
/// of a row that moved or was replaced: select it again in ``didChange``, at
/// ``position(for:)`` of the controller's `indexPath(for:)`.
///
/// A reload (a new sort; a search, or a save, whose batch is bigger than the controller's
/// `reloadThreshold`) is the exception: the items GTK holds (the ~200 rows a list view keeps
/// around the visible ones) keep their positions and take the new contents in place (their
/// `kind`, `row-key` and `name` properties notify, and `fr_row_get_revision` goes up), and
/// each run of them is announced replaced by the same items. GTK 4.8 then keeps their row
/// widgets and binds them again, instead of destroying about 200 and making as many
/// through the factory. So a factory shows what the item holds when it is bound, and does
/// not take the same item for the same contents (compare its revision too).
///
/// ```swift
/// let rows = try FetchedResultsListModel(controller: controller)
/// g_object_ref(UnsafeMutableRawPointer(rows.listModel))  // gtk_single_selection_new takes it
/// let selection = gtk_single_selection_new(rows.listModel)
/// rows.didChange = { batch in /* select the object that was selected */ }
/// ```
///
/// Keep a reference to the list model: the controller holds its delegate weakly. When the
/// list model goes, it stops following the controller; GTK may keep the GListModel, which then
/// keeps showing the last state. Use it, and change the context, on one thread (GTK's); do not
/// change the context from an `items-changed` handler.
///
/// Only GObject and GIO are used: the list model works without a display and without
/// `gtk_init`.
///
/// Made on the main thread, it attaches ``MainQueueSource`` to the GLib main loop, so that the
/// work a context schedules on the Dispatch main queue (its unsaved edits reaching the
/// controller, another context's save being merged) runs in a GTK application.
///
/// ## Topics
/// ### The GListModel
/// - ``listModel``
/// - ``identity(ofItem:)``
/// ### Positions
/// - ``count``
/// - ``item(at:)``
/// - ``position(for:)``
/// - ``position(forSectionHeader:)``
/// - ``indexPath(at:)``
/// ### Changes
/// - ``didChange``
/// - ``announcesGrowthInSteps``
@MainActor
public final class FetchedResultsListModel<Result: ManagedObject>: @MainActor FetchedResultsControllerDelegate {
    /// The controller whose results the list shows.
    public let controller: FetchedResultsController<Result>
    /// The `GListModel *` of `FrRow` items, owned by this object: take a reference
    /// (`g_object_ref`) before handing it to a function that takes ownership, such as
    /// `gtk_single_selection_new`.
    public let listModel: OpaquePointer
    /// Whether each section starts with a header item: true for a controller with sections.
    public var showsSectionHeaders: Bool { flattened.showsHeaders }
    /// Called after the list followed a batch of the controller (all its emissions done).
    public var didChange: ((ChangeBatch) -> Void)?
    /// Called before the list follows a batch, before its first emission, in order (the
    /// selection's, the list anchor's).
    var willChange: [(ChangeBatch) -> Void] = []

    /// Whether a short list that grows a lot is announced a few dozen items a turn of the
    /// main loop (default false: every change at once).
    ///
    /// GTK 4.8's list view makes a row widget for each new item around its anchor, up to
    /// 200, during the emission that announces them, and measures them all in the next
    /// frame: a list of a few dozen rows that becomes thousands (a desktop joining a shared
    /// list, a narrow search cleared) stalls the window twice for 100–200 ms. With this on,
    /// while GTK knows fewer than 224 items a batch takes it at most 32 items further, and
    /// the rest follow 32 at a time on later turns (a timeout on the main loop, about a
    /// frame apart), then all at once. Such a batch is followed as a reload: the rows GTK
    /// holds keep their widgets and take their new contents. GTK's list is always the first
    /// ``count`` items of the list, so its positions mean what they mean here; asking for
    /// the position of an item not announced yet (``position(for:)``) announces the rest.
    /// ``FetchedResultsListView`` turns it on. Leave it off where no GLib main loop runs:
    /// the rest would never be announced.
    public var announcesGrowthInSteps = false {
        didSet { if !announcesGrowthInSteps { announceRemainingItems() } }
    }

    let flattened: FlattenedSections
    private let items: ListItems
    private let entityName: String

    /// A list model of `controller`'s results; fetches them first if the controller has not.
    ///
    /// Becomes the controller's delegate and sets its `FetchedResultsController/changeReporting`
    /// to `ChangeReporting/batches`.
    public init(controller: FetchedResultsController<Result>) throws {
        if controller.sections == nil { try controller.performFetch() }
        self.controller = controller
        entityName = controller.fetchRequest.entityName
        flattened = FlattenedSections(sections: Self.sections(of: controller),
                                      showsHeaders: controller.sectionNameKeyPath != nil || controller.sectionFetchRequest != nil)
        items = ListItems(flattened: flattened)
        listModel = Self.makeListModel(showing: items)
        controller.changeReporting = .batches
        controller.delegate = self
        if Thread.isMainThread { MainQueueSource.attach() }
    }

    /// The controller's sections as the list holds them (their row keys shared with the
    /// controller until either changes them: a million rows are not copied one by one).
    private static func sections(of controller: FetchedResultsController<Result>) -> [FlattenedSections.Section] {
        (controller.sections ?? []).enumerated().map { s, info in
            FlattenedSections.Section(name: info.name, keys: controller.rowKeys(inSection: s))
        }
    }

    isolated deinit {
        if growthStep != 0 { g_source_remove(growthStep) }
        if controller.delegate === self { controller.delegate = nil }
        g_object_unref(UnsafeMutableRawPointer(listModel))
    }

    // MARK: Positions

    /// The number of items in ``listModel``: objects, plus one header per section when
    /// headers are shown. While a growth is announced in steps
    /// (``announcesGrowthInSteps``), the items at the end not announced yet are not counted.
    public var count: Int { items.growth.announced }

    /// What stands at `position` (`0..<count`).
    public func item(at position: Int) -> ListRow {
        switch flattened.location(at: position) {
        case .header(let section):
            return .header(sectionIndex: section)
        case .object(let indexPath):
            return .object(objectID(at: indexPath), indexPath)
        case nil:
            preconditionFailure("position \(position) is past the end of the list (\(count) items)")
        }
    }

    /// The position of the object at `indexPath`. When a growth announced in steps has not
    /// reached it yet, the rest of the list is announced first, so that GTK knows it.
    public func position(for indexPath: IndexPath) -> Int {
        announced(flattened.position(of: indexPath))
    }

    /// The position of section `section`'s header; nil when headers are not shown. While a
    /// growth is announced in steps it may be ``count`` or more: the header is not in GTK's
    /// list yet (a header is never selected; the header of a row GTK shows always is).
    public func position(forSectionHeader section: Int) -> Int? {
        showsSectionHeaders ? flattened.start(ofSection: section) : nil
    }

    /// `position`, announced to GTK first when a growth in steps has not reached it (not
    /// while a batch is followed: GTK's list is then on its way, and it is reached by the
    /// batch's end or a later step).
    private func announced(_ position: Int) -> Int {
        if position >= items.growth.announced, !isFollowingBatch { announceRemainingItems() }
        return position
    }

    /// The index path of the object at `position`; nil for a header or past the end.
    public func indexPath(at position: Int) -> IndexPath? {
        if case .object(let indexPath) = flattened.location(at: position) { return indexPath }
        return nil
    }

    /// The object `id`, shown at `position`. When the controller holds it there (it may not,
    /// while GTK binds rows during a change), it comes from there, so that a fault loads with
    /// its batch (`fetchBatchSize`); otherwise alone. Nil when it is gone.
    public func object(for id: ObjectID, atPosition position: Int? = nil) -> Result? {
        if let position, position < count, let indexPath = indexPath(at: position),
           indexPath.section < controller.numberOfSections {
            let keys = controller.rowKeys(inSection: indexPath.section)
            if indexPath.item < keys.count, keys[indexPath.item] == id.rowKey { return controller.object(at: indexPath) }
        }
        return try? controller.managedObjectContext.existingObject(with: id) as? Result
    }

    /// Where the list shows the object `id` now, found by reading every key; nil when not shown.
    func indexPath(of id: ObjectID) -> IndexPath? {
        guard id.entityName == entityName else { return nil }
        for (s, section) in flattened.sections.enumerated() {
            if let item = section.shownKeys.firstIndex(of: id.rowKey) { return IndexPath(item: item, section: s) }
        }
        return nil
    }

    /// Whether the list shows the object `id` at `indexPath` now.
    func shows(_ id: ObjectID, at indexPath: IndexPath) -> Bool {
        id.entityName == entityName && flattened.sections.indices.contains(indexPath.section)
            && (0..<flattened.numberOfObjects(inSection: indexPath.section)).contains(indexPath.item)
            && flattened.key(at: indexPath) == id.rowKey
    }

    /// What an item of ``listModel`` stands for (from `gtk_list_item_get_item` or
    /// `g_list_model_get_item`); nil when it is not an `FrRow`.
    public func identity(ofItem item: UnsafeMutableRawPointer) -> ListItemIdentity? {
        guard let row = fr_row_from_item(item) else { return nil }
        switch fr_row_get_kind(row) {
        case FR_ROW_KIND_HEADER:
            return .header(sectionName: String(cString: fr_row_get_name(row)))
        default:
            return .object(ObjectID(entityName: entityName, rowKey: Int64(fr_row_get_row_key(row))))
        }
    }

    private func objectID(at indexPath: IndexPath) -> ObjectID {
        ObjectID(entityName: entityName, rowKey: flattened.key(at: indexPath))
    }

    // MARK: Following the controller

    /// Follows `batch` with items-changed emissions, then calls ``didChange``.
    ///
    /// A batch that does not fit the list (one this list's controller did not deliver) is
    /// not followed: the list takes the controller's sections in one emission instead, and
    /// the mistake is reported to `FetchedResultsDiagnostics/warningHandler`.
    public func controller(_ controller: FetchedResultsController<Result>, didChangeContentWith batch: ChangeBatch) {
        isFollowingBatch = true
        // The list's own controller holds the sections the batch leads to: the list shares
        // their keys rather than copying its own.
        let own = self.controller, sectionCount = own.sections?.count ?? 0
        let followed = announcesGrowthInSteps ? followedInSteps(batch) : batch
        if announcesGrowthInSteps { items.growth.startTurn() }
        for observer in willChange { observer(followed) }
        // A reload keeps the items GTK holds (see FlattenedSections' reload step).
        let heldItems = HeldItems(
            positions: { [items] in items.heldPositions },
            reassign: { [items] in items.reassignHeldItems(in: $0) },
            announceReplaced: { [listModel, items] range in
                // Held items are in GTK's list, so GTK is told this as it is, and they stay held.
                guard let told = items.growth.emission(range.lowerBound, removed: range.count, added: range.count) else { return }
                Self.tell(told, to: listModel, items: items, forgettingItems: told != (range.lowerBound, range.count, range.count))
            })
        if let problem = flattened.apply(followed, reload: { Self.sections(of: own) },
                                         finalKeys: { $0 < sectionCount ? own.rowKeys(inSection: $0) : nil },
                                         emit: itemsChanged, isHeld: items.holdsItem(in:), heldItems: heldItems) {
            FetchedResultsDiagnostics.warningHandler(
                "FetchedResultsListModel was given a batch that does not fit its list (\(problem)); it reloaded the list from its controller. Only the list's own controller should call controller(_:didChangeContentWith:).")
        }
        isFollowingBatch = false
        scheduleGrowthStep()
        didChange?(batch)
    }

    /// Announces an emission of the list to GTK, as the emission of the part GTK knows.
    private var itemsChanged: (Int, Int, Int) -> Void {
        { [listModel, items] position, removed, added in
            guard let told = items.growth.emission(position, removed: removed, added: added) else { return }
            Self.tell(told, to: listModel, items: items)
        }
    }

    /// Emits items-changed, the items of the removed positions forgotten first unless they
    /// stay (replaced by themselves).
    private static func tell(_ emission: ListGrowth.Emission, to listModel: OpaquePointer, items: ListItems, forgettingItems: Bool = true) {
        if forgettingItems { items.itemsChanged(position: emission.position, removed: emission.removed, added: emission.added) }
        g_list_model_items_changed(listModel, guint(emission.position), guint(emission.removed), guint(emission.added))
    }

    // MARK: Growth in steps

    /// True while a batch is followed.
    private var isFollowingBatch = false
    /// The main loop's source of the next growth step; 0 when none is scheduled.
    private var growthStep: guint = 0

    /// The batch the list follows: `batch`, or a reload of the list when GTK knows only part
    /// of a short list, or when the batch would take a short list more than a step further.
    ///
    /// A reload keeps the items GTK holds (the rows of a short list are all held) and gives
    /// them their new contents in place, so GTK keeps its row widgets and binds them again,
    /// and the list's end grows by a step. Followed change by change, each change among the
    /// held rows would be announced on its own, and each beyond the step would push rows out
    /// of GTK's list, their widgets destroyed, to come back a turn later.
    private func followedInSteps(_ batch: ChangeBatch) -> ChangeBatch {
        let newCount = controller.numberOfObjects + (showsSectionHeaders ? controller.numberOfSections : 0)
        guard !batch.isReload, items.growth.outgrowsTurn(newCount: newCount) else { return batch }
        let sections = Self.sections(of: controller).map { ReloadedSections.Keyed(name: $0.name, keys: $0.keys) }
        return .reload(ReloadedSections(sections, entityName: entityName))
    }

    /// Schedules the next step of a growth when items are not announced yet.
    private func scheduleGrowthStep() {
        guard items.growth.isGrowing, growthStep == 0 else { return }
        // About a frame apart: GTK measures each step's new rows before the next comes.
        growthStep = MainLoop.after(milliseconds: 16) { [weak self] in
            guard let self else { return }
            self.growthStep = 0
            self.announceGrowthStep()
        }
    }

    private func announceGrowthStep() {
        if let step = items.growth.nextStep() { Self.tell(step, to: listModel, items: items) }
        scheduleGrowthStep()
    }

    /// Announces every item not announced yet, in one emission.
    private func announceRemainingItems() {
        if let rest = items.growth.nextStep(all: true) { Self.tell(rest, to: listModel, items: items) }
    }

    // MARK: The GObject

    /// The C list model, answering from `items`, which it keeps alive until finalized.
    private static func makeListModel(showing items: ListItems) -> OpaquePointer {
        let count: FrListModelCountFunc = { data in
            guint(Unmanaged<ListItems>.fromOpaque(data!).takeUnretainedValue().growth.announced)
        }
        let item: FrListModelItemFunc = { position, data in
            Unmanaged<ListItems>.fromOpaque(data!).takeUnretainedValue().item(at: Int(position))
        }
        let release: GDestroyNotify = { data in Unmanaged<ListItems>.fromOpaque(data!).release() }
        return fr_list_model_new(count, item, Unmanaged.passRetained(items).toOpaque(), release)!
    }
}
