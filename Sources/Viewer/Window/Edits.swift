import Foundation
import GtkBinding
import ObjectStore

/// The one place where the viewer saves an edit and decides what a failed save leaves: every
/// edit (a tap, a check button, a delete, an undo, a dialog's Save) makes its changes and
/// saves them through ``save(in:mergePolicy:whenBusy:undoneBy:_:)``, which then remembers
/// how to undo it, or discards the changes, or keeps them for later.
///
/// When the changes or the save fail, every unsaved change of the context is discarded, but
/// for a store kept locked by another program (``StoreError/Kind-swift.struct/busy``) where
/// the edit asks to keep them (``WhenBusy/keep``): then the changes stay, are saved again
/// every ``retryIntervalMilliseconds`` until it works, and the error is rethrown so the
/// person is told.
final class Edits {
    /// What an edit whose save finds the store locked by another program does.
    enum WhenBusy {
        /// Keeps the changes in the context and saves them later (a row's tap or check
        /// button, a delete, an undo: nothing else holds what the person did).
        case keep
        /// Discards them, as any failed edit (a dialog stays open with what the person typed).
        case discard
    }

    /// The dataset's context: where edits are made unless they name another, and what
    /// ``undo()`` changes.
    let context: ObjectContext
    /// The saved edits Undo reverts, last last.
    private var undoStack: [UndoEntry] = []
    /// Called when changes kept while the store was busy are saved.
    var keptChangesSaved: (() -> Void)?
    private var retryingKeptChanges = false

    /// How long the window waits before saving again changes that found the store locked.
    static let retryIntervalMilliseconds: UInt32 = 2_000

    init(context: ObjectContext) {
        self.context = context
    }

    /// Whether a failed save with `error` keeps the changes of an edit saved with
    /// ``WhenBusy/keep`` (to save them later): when another program keeps the store locked.
    static func keepsChanges(after error: any Error) -> Bool {
        (error as? StoreError)?.kind == .busy
    }

    /// Whether there is a saved edit to undo.
    var canUndo: Bool { !undoStack.isEmpty }

    /// Makes `changes` in `context` (the dataset's when nil) and saves them, under
    /// `mergePolicy` (the context's when nil); once saved (or kept, see ``WhenBusy``),
    /// remembers `undo` of the result for ``undo()``. When `changes` or the save throw, every
    /// unsaved change of the context is discarded, but for a busy store and ``WhenBusy/keep``;
    /// the error is rethrown.
    @discardableResult
    func save<T>(in context: ObjectContext? = nil, mergePolicy: MergePolicy? = nil, whenBusy: WhenBusy = .keep,
                 undoneBy undo: (T) -> UndoEntry?, _ changes: () throws -> T) throws -> T {
        let context = context ?? self.context
        // Only the dataset's context is saved again later.
        assert(whenBusy == .discard || context === self.context, "kept changes are saved again in the dataset's context only")
        let result: T
        do {
            result = try changes()
        } catch {
            context.rollback()
            throw error
        }
        do {
            if let mergePolicy { try context.save(mergePolicy: mergePolicy) } else { try context.save() }
        } catch where whenBusy == .keep && Self.keepsChanges(after: error) {
            remember(undo(result))
            retryKeptChangesLater()
            throw error
        } catch {
            context.rollback()
            throw error
        }
        remember(undo(result))
        return result
    }

    /// Reverts the last saved edit and saves; returns the object it brought back or changed
    /// (nil when nothing was left to undo or the object was removed).
    @discardableResult
    func undo() throws -> ManagedObject? {
        guard let entry = undoStack.popLast() else { return nil }
        var reinserted: [(old: ObjectID, object: ManagedObject)] = []
        let object = try save(undoneBy: { _ in nil }) { try entry.revert(in: context, reinserted: &reinserted) }
        // Saved, the objects brought back have their new IDs: the edits made before their
        // delete name them by those.
        let renames = Dictionary(reinserted.map { ($0.old, $0.object.objectID) }) { first, _ in first }
        if !renames.isEmpty { undoStack = undoStack.map { $0.renaming(renames) } }
        return object
    }

    private func remember(_ entry: UndoEntry?) {
        if let entry { undoStack.append(entry) }
    }

    private func retryKeptChangesLater() {
        guard !retryingKeptChanges else { return }
        retryingKeptChanges = true
        MainLoop.after(milliseconds: Self.retryIntervalMilliseconds) { [weak self] in
            guard let self else { return }
            self.retryingKeptChanges = false
            guard self.context.hasChanges else { return }
            do {
                try self.context.save()
                self.keptChangesSaved?()
            } catch where Self.keepsChanges(after: error) {
                self.retryKeptChangesLater()
            } catch {
                // Refused for another reason (a conflict, a rule): as for any failed edit.
                self.context.rollback()
            }
        }
    }
}
