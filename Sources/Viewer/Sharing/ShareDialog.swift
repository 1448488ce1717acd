import CAdw
import CGtk
import Foundation
import GtkBinding
import Sharing

/// Share… asks for the PostgreSQL database to share the list through. The address is
/// checked as it is typed (``ServerConfiguration/init(url:environment:)``): what is wrong with
/// it shows under it, and Share stays off until it is an address.
final class ShareDialog {
    /// An `AdwMessageDialog`.
    let window: Widget
    let entry: Widget
    /// What is wrong with the address; hidden while it is right (or empty).
    let message: Widget
    /// Called with the address when the person chose Share.
    var didShare: ((String) -> Void)?

    /// The dialog, its entry holding `address` (the server the store shared through last).
    init(parent: Widget, address: String? = nil) {
        window = adw_message_dialog_new(parent.cast(), "Share This List",
            "Other desktops that share the same PostgreSQL database see the changes made here as they are made, and this window shows theirs. The password comes from PGPASSWORD or ~/.pgpass.")
        let dialog: UnsafeMutablePointer<AdwMessageDialog> = window.cast()
        adw_message_dialog_add_response(dialog, "cancel", "_Cancel")
        adw_message_dialog_add_response(dialog, "share", "_Share")
        adw_message_dialog_set_response_appearance(dialog, "share", ADW_RESPONSE_SUGGESTED)
        adw_message_dialog_set_default_response(dialog, "share")
        adw_message_dialog_set_close_response(dialog, "cancel")
        entry = gtk_entry_new()
        gtk_entry_set_placeholder_text(entry.cast(), "postgresql://USER@HOST[:PORT]/DATABASE")
        gtk_entry_set_activates_default(entry.cast(), 1)
        if let address { gtk_editable_set_text(OpaquePointer(entry), address) }
        let title = makeLabel("Server", naming: entry)
        gtk_label_set_xalign(title.opaque, 0)
        message = makeLabel(classes: ["dialog-error"])
        wrapAnywhere(message)
        adw_message_dialog_set_extra_child(dialog, makeBox(GTK_ORIENTATION_VERTICAL, spacing: 6, [title, entry, message]))
        // The handlers keep the dialog alive until its window is destroyed.
        Signal.connect(entry.object, "changed") { [self] in self.check() }
        Signal.connect(window.object, "response") { [self] (response: gpointer?) in
            guard let response, String(cString: response.assumingMemoryBound(to: CChar.self)) == "share" else { return }
            self.didShare?(self.url)
        }
        check()
    }

    func present() {
        gtk_window_present(window.cast())
    }

    /// The address typed, without spaces around it.
    var url: String {
        String(cString: gtk_editable_get_text(OpaquePointer(entry))).trimmingCharacters(in: .whitespaces)
    }

    /// Says what is wrong with the address, and offers Share only for one that is right.
    private func check() {
        var problem: String?
        if !url.isEmpty {
            do { _ = try ServerConfiguration(url: url) } catch let error as SharingError where error.kind == .invalidURL {
                problem = "Not a server address: \(error.reason). Write postgresql://USER@HOST[:PORT]/DATABASE"
            } catch {
                problem = "\(error)"
            }
        }
        gtk_label_set_text(message.opaque, problem ?? "")
        message.isVisible = problem != nil
        adw_message_dialog_set_response_enabled(window.cast(), "share", !url.isEmpty && problem == nil ? 1 : 0)
    }
}
