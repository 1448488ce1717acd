import CAdw
import CGtk
import Datasets
import GtkBinding
import Sharing

/// Sharing the list through PostgreSQL: a dataset's store shares as it opens when it should,
/// the header bar's indicator says how it stands, Share… and Stop Sharing in the primary
/// menu, and a toast for each edit that met another desktop's.
extension ViewerWindow {
    /// `win.share` (the Share dialog), `win.stop-sharing`, and `win.sharing-conflicts(N)`
    /// (the details of the toast whose last conflict is N). Returns the first two.
    func addSharingActions() -> (share: OpaquePointer, stop: OpaquePointer) {
        let map: UnsafeMutableRawPointer = actionMap
        Action.add(to: map, "sharing-conflicts", state: 0) { [weak self] parameter in
            guard let self, let parameter else { return }
            self.showConflictDetails(self.toastedConflicts[Int64(g_variant_get_int32(parameter))] ?? [])
        }
        // The window's sharing ends with it (local commits wait in the store for the next session).
        Signal.connect(window.object, "destroy") { [weak self] in self?.session?.sharing?.stop() }
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
        didUpdate?()
    }

    func showShareDialog() {
        guard session?.sharing == nil else { return }
        let dialog = ShareDialog(parent: window, address: try? session?.context.store.lastSharingServer())
        dialog.didShare = { [weak self] url in self?.share(through: url) }
        shareDialog = dialog
        dialog.present()
    }

    /// Opens the dataset shown again, sharing through `url`: the window's context then
    /// follows the store as a shared one does from the start. The selection stays.
    func share(through url: String) {
        guard let session else { return }
        let selected = session.selection.selectedObject?.objectID
        shareRequest = (session.dataset.name, .share(url: url))
        do {
            try open(datasetNamed: session.dataset.name)
        } catch {
            shareRequest = nil
            return showError("\(error)", prefix: "Not shared")
        }
        if let selected, let object = self.session?.object(for: selected) { self.session?.selection.select(object) }
    }

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
        showToast(text, action: ("_Details", "win.sharing-conflicts(\(Int32(clamping: last)))")) { [weak sharing = session?.sharing] in
            sharing?.dismissConflicts(through: last)
        }
    }

    /// The conflicts of a toast, each with the values that met.
    private func showConflictDetails(_ conflicts: [SharingConflict]) {
        guard !conflicts.isEmpty else { return }
        let body = conflicts.map { "\(summary(of: $0)).\n\($0.details)." }.joined(separator: "\n\n")
        let dialog = adw_message_dialog_new(window.cast(), "Changed on Another Desktop", body)!
        adw_message_dialog_add_response(dialog.cast(), "close", "_Close")
        gtk_window_present(dialog.cast())
    }

    /// "Ghana: Wins was changed on another desktop; kept theirs", in the dataset's words.
    func summary(of conflict: SharingConflict) -> String {
        guard let session else { return conflict.description }
        let listed = conflict.entity == session.controller.fetchRequest.entityName
        let object = listed ? conflict.objectID.flatMap { session.object(for: $0) } : nil
        let name = object.map { ViewConfiguration.render(session.view.row.title, for: $0) }
        let fields = conflict.keys.map { listed ? session.view.label(forKeyPath: $0) : ViewConfiguration.words($0) }
        let what = "\(fields.joined(separator: ", ")) \(fields.count == 1 ? "was" : "were") changed on another desktop"
        switch conflict.resolution {
        case .tookServer: return "\(name ?? ViewConfiguration.words(conflict.entity)): \(what); kept theirs"
        case .keptLocal: return "\(name ?? ViewConfiguration.words(conflict.entity)): \(what); kept yours"
        case .deleted: return "\(name.map { "“\($0)”" } ?? "A " + ViewConfiguration.words(conflict.entity).lowercased()) was deleted on another desktop; your edits were dropped"
        }
    }
}
