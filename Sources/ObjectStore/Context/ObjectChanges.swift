import Synchronization
/// A set of changes to objects, by ID: what a context posts when it processes pending
/// changes, saves, rolls back, or merges another context's save.
public struct ObjectChanges: Sendable, Hashable, CustomStringConvertible {
    /// Objects that were inserted.
    public var inserted: Set<ObjectID> = []
    /// Objects that were updated, with the keys that changed.
    public var updated: [ObjectID: Set<String>] = [:]
    /// Objects that were deleted.
    public var deleted: Set<ObjectID> = []
    /// Whether any object may have changed beyond those listed (Core Data's
    /// `NSInvalidatedAllObjectsKey`): a context that followed the store fell behind its pruned
    /// change history, so it cannot know which rows were inserted or deleted. Its registered
    /// objects are listed as updated (or deleted when their row is gone); whoever shows a
    /// result fetches it again. A controller does, and reports the difference as one batch.
    public var invalidatedAllObjects = false

    public init(inserted: Set<ObjectID> = [], updated: [ObjectID: Set<String>] = [:], deleted: Set<ObjectID> = [],
                invalidatedAllObjects: Bool = false) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.invalidatedAllObjects = invalidatedAllObjects
    }

    /// Whether nothing changed.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty && !invalidatedAllObjects }

    public var description: String {
        "inserted \(inserted.map(\.description).sorted()), updated \(updated.keys.map(\.description).sorted()), deleted \(deleted.map(\.description).sorted())"
            + (invalidatedAllObjects ? ", all objects invalidated" : "")
    }
}

/// Something that happened in a context, delivered to its observers on the context's queue.
public enum ContextEvent: Sendable, Hashable {
    /// Pending changes were processed (after edits, a rollback, or a merged save of another
    /// context): what a list showing the context's objects must follow.
    case objectsDidChange(ObjectChanges)
    /// The context saved these changes to the store; IDs are permanent.
    case didSave(ObjectChanges)
}

/// Keeps an observation alive; the observer is removed when this is released or cancelled.
///
/// Cancelling runs its action once, whichever thread cancels or releases the token (the
/// action is taken under a lock, and run outside it).
public final class ObservationToken: Sendable {
    private let onCancel: Mutex<(() -> Void)?>

    init(onCancel: sending @escaping () -> Void) { self.onCancel = Mutex(onCancel) }

    /// Stops the observation.
    public func cancel() {
        let action = onCancel.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
    }

    deinit { cancel() }
}
