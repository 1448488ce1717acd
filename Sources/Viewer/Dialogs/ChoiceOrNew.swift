import CAdw
import CGtk
import CViewer
import Foundation
import GtkBinding

/// A choice among existing names with a clearly separate way to give a new one: a
/// drop-down of the names, then "New Qualifying zone…", which shows an entry for the new
/// name. The dialogs use it for a field whose values are the list's sections, so that a
/// section is chosen, not retyped ("africa" would make a seventh zone beside "Africa").
final class ChoiceOrNew {
    /// The drop-down and, below it, the entry (shown for a new name).
    let widget: Widget
    let dropDown: Widget
    let entry: Widget
    let names: [String]

    /// `names` to choose from, and `newLabel` ("New Qualifying zone…") last, for a new one.
    init(names: [String], newLabel: String, accessibleName: String) {
        self.names = names
        // Named by its label in the dialog (labelled-by); its inner parts by that name too.
        dropDown = makeDropDown(names + [newLabel])
        InnerPartNames.name(dropDown: dropDown, accessibleName)
        gtk_widget_set_halign(dropDown, GTK_ALIGN_START)
        entry = gtk_entry_new()
        gtk_entry_set_activates_default(entry.cast(), 1)
        gtk_entry_set_placeholder_text(entry.cast(), newLabel.replacingOccurrences(of: "…", with: ""))
        fr_accessible_set_text(entry, GTK_ACCESSIBLE_PROPERTY_LABEL, newLabel.replacingOccurrences(of: "…", with: ""))
        gtk_widget_set_hexpand(entry, 1)
        entry.isVisible = names.isEmpty
        widget = makeBox(GTK_ORIENTATION_VERTICAL, spacing: 6, [dropDown, entry])
        if names.isEmpty { gtk_drop_down_set_selected(dropDown.opaque, 0) }
        Signal.connect(dropDown.object, "notify::selected") { [weak self] (_: gpointer?) in
            guard let self else { return }
            self.entry.isVisible = self.isNew
            if self.isNew { gtk_widget_grab_focus(self.entry) }
        }
    }

    /// Whether "New …" is chosen.
    var isNew: Bool { Int(gtk_drop_down_get_selected(dropDown.opaque)) >= names.count }

    /// The index of the name chosen; nil for a new one.
    var selectedIndex: Int? {
        get { isNew ? nil : Int(gtk_drop_down_get_selected(dropDown.opaque)) }
        set { gtk_drop_down_set_selected(dropDown.opaque, guint(newValue ?? names.count)) }
    }

    /// The name chosen, or the new one typed.
    var text: String {
        get { selectedIndex.map { names[$0] } ?? String(cString: gtk_editable_get_text(OpaquePointer(entry))) }
        set {
            if let index = names.firstIndex(of: newValue) {
                selectedIndex = index
            } else {
                selectedIndex = nil
                gtk_editable_set_text(OpaquePointer(entry), newValue)
            }
        }
    }

    /// The existing name that a new one typed is, but for case and spaces ("africa" for
    /// "Africa"): a new section only by mistake. Nil when the new name is new.
    var existingNameTyped: String? {
        guard isNew else { return nil }
        let typed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return names.first { $0.compare(typed, options: [.caseInsensitive]) == .orderedSame }
    }
}
