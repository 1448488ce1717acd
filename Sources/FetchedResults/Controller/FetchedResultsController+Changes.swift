import Foundation
import ObjectStore

extension FetchedResultsController {
    // MARK: Events in

    /// Follows the context's changes while someone listens (a delegate or a
    /// ``changeBatches`` subscriber) and the results were fetched.
    func updateObservation() {
        if (delegate != nil || subscribers.hasSubscribers) && hasFetched {
            if observation == nil {
                observation = managedObjectContext.addObserver { [weak self] event in self?.contextDidChange(event) }
            }
        } else {
            observation = nil
        }
    }

    func contextDidChange(_ event: ContextEvent) {
        switch event {
        case .objectsDidChange(let changes):
            run(machine.contextChanged(changes, merged: managedObjectContext.isMergingChanges))
        case .didSave(let changes):
            // Unsaved objects got their saved keys: same places, new IDs.
            renameSavedObjects(changes)
        }
    }

    // MARK: Actions out

    /// Carries out what the state machine decided.
    func run(_ action: Machine.Action) {
        switch action {
        case .none:
            break
        case .makeBatch(let changes, let merged):
            makeBatchOrHold(changes, merged: merged)
        case .makeBatchOfHeld(let changes, let merged):
            makeBatchOrHold(changes.namingSavedObjects(in: managedObjectContext), merged: merged)
        case .showBackgroundBatch:
            preconditionFailure("a batch made in the background is shown by finishPlacingInBackground or finishRefetchingInBackground, which found it")
        case .finishLoading(let held, let completions, let error):
            if let held { makeBatchOrHold(held.namingSavedObjects(in: managedObjectContext), merged: false) }
            for completion in completions { completion(error) }
        }
    }

    /// Makes a batch of changes an action released, unless work started meanwhile (a
    /// delegate that merged a save while it was told of the batch before, which started a
    /// placement in the background): then they are held again, as a change that comes then is.
    private func makeBatchOrHold(_ changes: ObjectChanges, merged: Bool) {
        guard case .showing = machine.state else { return run(machine.contextChanged(changes, merged: merged)) }
        makeBatch(of: changes, merged: merged)
    }

    /// Turns one set of context changes into a change batch for the delegate, the way the
    /// ``policy`` picks (``BatchPolicy/route(for:)``):
    ///
    /// - updates of keys the request does not read move nothing: each is an update where the
    ///   object is (``rowsUpdatedInPlace(_:changes:sectionsChanged:)``);
    /// - most changes are placed in memory, where each changed object now belongs (predicate,
    ///   section and sort decided as SQLite would), touching only the changed objects and the
    ///   few a binary search compares them with (`Placement/`);
    /// - requests with a limit or offset, sections from their own entity, many changed objects
    ///   at once and changes that may touch any object (``ObjectChanges/invalidatedAllObjects``)
    ///   fetch the results again (only the touched sections when it can,
    ///   `Loading/RefetchingSections.swift`) and name the changes they know of, or take the
    ///   difference (`Batch/KnownChangesDifference.swift`).
    ///
    /// `merged`: the changes were saved elsewhere, so many of them on a long list may be
    /// placed or fetched off the context's queue (``BatchPolicy/backgroundThreshold``,
    /// `Placement/PlacingInBackground.swift`, `Loading/RefetchingInBackground.swift`).
    func makeBatch(of changes: ObjectChanges, merged: Bool) {
        let context = managedObjectContext
        let (changed, sectionsChanged) = changedRows(changes)
        guard !changed.isEmpty || sectionsChanged || changes.invalidatedAllObjects else { return }
        if let inPlace = rowsUpdatedInPlace(changed, changes: changes, sectionsChanged: sectionsChanged) {
            return reportUpdatesInPlace(inPlace, context: context)
        }
        let updated = updatedObjects(changed)
        let deleted = Set(changes.deleted.filter { $0.entityName == entityName }.map(\.rowKey))
        let summary = BatchPolicy.ChangeSummary(
            changedObjects: changed.count, listCount: numberOfObjects, invalidatedAllObjects: changes.invalidatedAllObjects,
            limited: fetchRequest.fetchLimit > 0 || fetchRequest.fetchOffset > 0, sectionsFromEntity: sectionFetchRequest != nil,
            sortsAcrossRelationships: fetchRequest.sortDescriptors.contains { $0.key.contains(".") }, merged: merged)
        switch policy.route(for: summary) {
        case .refetch(let onlyTouchedSections, let inBackground):
            // Only the changed objects can have moved: the others keep their order.
            let changedKeys = changes.invalidatedAllObjects ? nil : Set(changed.keys)
            if inBackground, refetchInBackground(changes, changedKeys: changedKeys, updated: updated) { return }
            let fresh: [Section]
            do {
                fresh = try (onlyTouchedSections ? layoutFetchingSections(of: changed, deleted: deleted, context: context) : nil)
                    ?? fetchLayout(for: fetchRequest, useCache: false)
            } catch {
                return fail(error)
            }
            report(from: layout, to: fresh, updated: updated, changedKeys: changedKeys)
        case .place(let inBackgroundIfMany):
            placeInMemory(changed: changed, deleted: deleted, context: context, inBackground: inBackgroundIfMany ? changes : nil)
        }
    }

    /// Tells the delegate that the objects of `changed` the list shows were updated where
    /// they are: no search, no fetch.
    func reportUpdatesInPlace(_ changed: [Int64: Set<String>?], context: ObjectContext) {
        counts.updatesInPlace += 1
        // In the list's order, sorted as plain numbers: sorting the places themselves (a type
        // nested in this generic class) took a third of the main thread's time in the
        // firehose's follower, 1,000 updates a batch.
        var places = locations(of: changed.keys, context: context).map { key, place in (section: place.section, item: place.item, key: key) }
        places.sort { ($0.section, $0.item) < ($1.section, $1.item) }
        var batch = ChangeBatch()
        batch.objectChanges = places.map { place in
            let path = IndexPath(item: place.item, section: place.section)
            return ObjectChange(type: .update, objectID: ObjectID(entityName: entityName, rowKey: place.key), indexPath: path, newIndexPath: path)
        }
        deliver(batch, from: layout)
    }

    /// Objects the delegate knows by temporary IDs were saved: the same rows take their
    /// permanent IDs, reported as a batch of renames (``ChangeBatch/renamedObjectIDs``).
    func renameSavedObjects(_ changes: ObjectChanges) {
        var renamed: [ObjectID: ObjectID] = [:]
        for id in changes.inserted where id.entityName == entityName || id.entityName == sectionEntityName {
            guard let object = try? managedObjectContext.object(with: id), let temporary = object.temporaryObjectID else { continue }
            renamed[temporary] = id
        }
        guard !renamed.isEmpty else { return }
        let old = layout
        // The renames of objects the list shows, found as they are renamed: no set of every
        // row key made to ask.
        var shownRenamed: [ObjectID: ObjectID] = [:]
        for s in layout.indices {
            if let key = layout[s].sectionObjectKey, case let temporary = ObjectID(entityName: sectionEntityName ?? "", rowKey: key),
               let id = renamed[temporary] {
                layout[s].sectionObjectKey = id.rowKey
                shownRenamed[temporary] = id
            }
            // Unsaved objects have negative keys: most sections hold none (one pass, not
            // an access of the layout for each key).
            guard layout[s].keys.contains(where: { $0 < 0 }) else { continue }
            for i in layout[s].keys.indices where layout[s].keys[i] < 0 {
                let temporary = ObjectID(entityName: entityName, rowKey: layout[s].keys[i])
                if let id = renamed[temporary] {
                    layout[s].keys[i] = id.rowKey
                    shownRenamed[temporary] = id
                }
            }
        }
        guard !shownRenamed.isEmpty else { return }
        deliver(ChangeBatch(renamedObjectIDs: shownRenamed), from: old)
    }
}
