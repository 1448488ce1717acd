import CAdw
import CGtk
import Datasets
import GtkBinding
import ObjectStore
import Sharing

/// Sharing the list through PostgreSQL: a dataset's store shares as it opens when it should,
/// the header bar's indicator says how it stands, Share… and Stop Sharing in the primary
/// menu, and a toast for each edit that met another desktop's.
extension ViewerWindow {
    /// `win.share` (the Share dialog), `win.stop-sharing`, `win.sharing-conflicts(N)` (the
    /// details of the toast whose last conflict is N) and `win.sharing-rejected(N)` (likewise
    /// for changes refused). Returns the first two.
    func addSharingActions() -> (share: OpaquePointer, stop: OpaquePointer) {
        let map: UnsafeMutableRawPointer = actionMap
        Action.add(to: map, "sharing-conflicts", state: 0) { [weak self] parameter in
            guard let self, let parameter else { return }
            self.showConflictDetails(self.toastedConflicts[Int64(g_variant_get_int32(parameter))] ?? [])
        }
        Action.add(to: map, "sharing-rejected", state: 0) { [weak self] parameter in
            guard let self, let parameter else { return }
            self.showRejectionDetails(self.toastedRejections[Int64(g_variant_get_int32(parameter))] ?? [])
        }
        return (Action.add(to: map, "share") { [weak self] _ in self?.showShareDialog() },
                Action.add(to: map, "stop-sharing") { [weak self] _ in self?.stopSharing() })
    }

    /// Starts sharing the store of `session` (a dataset just opened) as ``shareRequest`` says
    /// for it, else when the store remembers a server; returns why it could not.
    func startSharing(_ session: DatasetSession) -> String? {
        let name = session.dataset.name
        let request = shareRequest?.dataset == name ? shareRequest?.request : nil
        if request != nil { shareRequest = nil }
        do {
            session.sharing = try DatasetSharing.start(for: session, request: request)
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// Shows how the dataset shown shares, and hears of its changes.
    func showSharing() {
        if let sharing = session?.sharing {
            sharing.didChangeStatus = { [weak self] _ in self?.sharingChanged() }
            sharing.didFindConflicts = { [weak self] conflicts in self?.showConflicts(conflicts) }
            sharing.didRejectChanges = { [weak self] rejected in self?.showRejections(rejected) }
            sharing.lookForConflicts()
        }
        sharingChanged()
    }

    /// The indicator, and which of Share… and Stop Sharing apply.
    private func sharingChanged() {
        let sharing = session?.sharing
        sharingIndicator.show(sharing?.status)
        Action.setEnabled(shareAction, session != nil && sharing == nil)
        Action.setEnabled(stopSharingAction, sharing != nil)
        updateButtons()
        didUpdate?()
    }

    func showShareDialog() {
        guard session?.sharing == nil else { return }
        let dialog = ShareDialog(parent: window, address: try? session?.context.store.lastSharingServer())
        dialog.didShare = { [weak self] url in self?.share(through: url) }
        shareDialog = dialog
        dialog.present()
    }

    /// Shares the dataset shown through `url`, in place: its store, its list and the
    /// selection stay (its context follows the store already, as a shared one must), so the
    /// click costs no reopening and no refetch; the server's rows come in as batches. Says
    /// why in the banner when it cannot, and takes that back once it shares.
    package func share(through url: String) {
        guard let session, session.sharing == nil else { return }
        do {
            session.sharing = try DatasetSharing.start(for: session, request: .share(url: url))
        } catch {
            return showError("\(error)", prefix: Self.notShared)
        }
        if banner.isVisible, labelText(banner).hasPrefix(Self.notShared + ":") { showError(nil) }
        showSharing()
    }

    /// The banner's first words when the store could not share.
    static let notShared = "Not shared"

    /// Stops the session, then the store forgets its server.
    func stopSharing() {
        guard let session, let sharing = session.sharing else { return }
        session.sharing = nil
        sharingChanged()
        sharing.stop(forget: true) { [weak self] error in
            if let error { self?.showError("\(error)", prefix: "Still shared") }
        }
    }

    /// A toast for conflicts the session recorded: what became of the edit, with Details;
    /// once it goes, the store forgets them.
    private func showConflicts(_ conflicts: [SharingConflict]) {
        guard let last = conflicts.last?.number else { return }
        toastedConflicts[last] = conflicts
        let text = conflicts.count == 1 ? summary(of: conflicts[0]) : "\(conflicts.count) edits met changes made on another desktop"
        showSharingToast(text, details: "win.sharing-conflicts", last: last) { $0?.dismissConflicts(through: last) }
    }

    /// A toast for changes the session refused for not fitting the model, with Details;
    /// once it goes, the store forgets them.
    private func showRejections(_ rejected: [RejectedChange]) {
        guard let last = rejected.last?.number else { return }
        toastedRejections[last] = rejected
        let text = rejected.count == 1 ? summary(of: rejected[0]) : "\(rejected.count) changes were refused: they do not fit this list"
        showSharingToast(text, details: "win.sharing-rejected", last: last) { $0?.dismissRejectedChanges(through: last) }
    }

    /// A toast whose Details button runs `action` with `last` (the number of the last item
    /// it names); `dismiss` is called with the sharing once the toast goes.
    private func showSharingToast(_ text: String, details action: String, last: Int64, dismiss: @escaping (DatasetSharing?) -> Void) {
        showToast(text, action: ("_Details", "\(action)(\(Int32(clamping: last)))")) { [weak sharing = session?.sharing] in dismiss(sharing) }
    }

    /// The rejected changes of a toast, each with why.
    private func showRejectionDetails(_ rejected: [RejectedChange]) {
        showDetails("Changes Not Taken", rejected.map { "\(summary(of: $0)).\n\($0)." })
    }

    /// "A change of “Ghana” from the server was not taken: Team name must not be empty", in
    /// the dataset's words (from the server: written there by another desktop, a script or
    /// a person with `psql`).
    func summary(of rejected: RejectedChange) -> String {
        let name = shownName(of: rejected.objectID, entity: rejected.entity).map(quoted) ?? "a " + ViewConfiguration.words(rejected.entity).lowercased()
        // The reason starts with the key ("teamName must not be empty"): said with its label.
        let why = rejected.key.map { key in
            rejected.reason.hasPrefix(key + " ") ? label(of: key, entity: rejected.entity) + rejected.reason.dropFirst(key.count) : rejected.reason
        } ?? rejected.reason
        switch rejected.direction {
        case .pulled: return "A change of \(name) from the server was not taken: \(why)"
        case .notPushed: return "A change of \(name) was not shared: \(why)"
        case .refused: return "A change of \(name) was refused by the server and undone: \(why)"
        }
    }

    /// The conflicts of a toast, each with the values that met.
    private func showConflictDetails(_ conflicts: [SharingConflict]) {
        showDetails("Changed on Another Desktop", conflicts.map { "\(summary(of: $0)).\n\($0.details)." })
    }

    /// "Ghana: Wins was changed on another desktop; kept theirs", in the dataset's words.
    func summary(of conflict: SharingConflict) -> String {
        let name = shownName(of: conflict.objectID, entity: conflict.entity)
        let fields = conflict.keys.map { label(of: $0, entity: conflict.entity) }
        let what = "\(fields.joined(separator: ", ")) \(fields.count == 1 ? "was" : "were") changed on another desktop"
        switch conflict.resolution {
        case .tookServer: return "\(name ?? ViewConfiguration.words(conflict.entity)): \(what); kept theirs"
        case .keptLocal: return "\(name ?? ViewConfiguration.words(conflict.entity)): \(what); kept yours"
        case .deleted: return "\(name.map(quoted) ?? "A " + ViewConfiguration.words(conflict.entity).lowercased()) was deleted on another desktop; your edits were dropped"
        }
    }

    /// A sharing toast's Details: one paragraph an item.
    private func showDetails(_ title: String, _ paragraphs: [String]) {
        guard !paragraphs.isEmpty else { return }
        let dialog = adw_message_dialog_new(window.cast(), title, paragraphs.joined(separator: "\n\n"))!
        adw_message_dialog_add_response(dialog.cast(), "close", "_Close")
        gtk_window_present(dialog.cast())
    }

    /// The title of the object's row ("Ghana"), when the list shows its entity and has it.
    private func shownName(of objectID: ObjectID?, entity: String) -> String? {
        guard let session, entity == session.controller.fetchRequest.entityName,
              let object = objectID.flatMap({ session.object(for: $0) }) else { return nil }
        return ViewConfiguration.render(session.view.row.title, for: object)
    }

    /// A key of `entity` as people read it: its label where the list shows the entity.
    private func label(of key: String, entity: String) -> String {
        guard let session, entity == session.controller.fetchRequest.entityName else { return ViewConfiguration.words(key) }
        return session.view.label(forKeyPath: key)
    }
}
