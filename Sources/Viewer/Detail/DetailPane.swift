import CAdw
import CGtk
import CViewer
import GtkBinding
import Datasets
import Foundation
import ObjectStore

/// The right-hand pane: every attribute of the selected object, the attributes of its to-one
/// related objects, and the counts of its to-many relationships.
final class DetailPane {
    /// The pane's top widget (a scrolled window).
    let widget: Widget
    private let title: Widget
    private let placeholder: Widget
    private let grid: Widget
    private var gridRows: Int32 = 0

    init() {
        // A heading, for screen readers as for the eye.
        title = fr_label_new_with_role(GTK_ACCESSIBLE_ROLE_HEADING)!
        title.addClass("detail-title")
        gtk_label_set_xalign(title.opaque, 0)
        wrapAnywhere(title)
        // Empty, the pane is a status page, as GNOME apps show an empty pane.
        placeholder = adw_status_page_new()!
        placeholder.addClass("compact")
        gtk_widget_set_vexpand(placeholder, 1)
        grid = gtk_grid_new()
        gtk_grid_set_row_spacing(grid.cast(), 6)
        gtk_grid_set_column_spacing(grid.cast(), 18)
        let content = makeBox(GTK_ORIENTATION_VERTICAL, spacing: 12, [title, placeholder, grid])
        content.addClass("detail-pane")
        widget = gtk_scrolled_window_new()
        gtk_scrolled_window_set_policy(widget.opaque, GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC)
        gtk_scrolled_window_set_child(widget.opaque, content)
        nameScrollBars(of: widget, "Scroll the details")
        show(nil, view: nil)
    }

    /// Shows `object` (nothing when nil) with its title from the dataset's row template.
    /// (What happened to a previously selected object is a toast of the window.)
    func show(_ object: ManagedObject?, view: ViewConfiguration?) {
        clearGrid()
        guard let object, !object.isDeleted, object.managedObjectContext != nil else {
            title.isVisible = false
            placeholder.isVisible = true
            adw_status_page_set_icon_name(placeholder.opaque, "view-list-symbolic")
            adw_status_page_set_title(placeholder.opaque, "Nothing Selected")
            adw_status_page_set_description(placeholder.opaque, "Choose a row in the list to see all of it here.")
            return
        }
        title.isVisible = true
        placeholder.isVisible = false
        gtk_label_set_text(title.opaque, view.map { ViewConfiguration.render($0.row.title, for: object) } ?? object.objectID.description)
        let label = { (keyPath: String) in view?.label(forKeyPath: keyPath) ?? ViewConfiguration.words(keyPath) }
        // The row image's attribute names a picture (none ships), not a value for people.
        addAttributes(of: object, label: label, hiding: view?.row.image)
        for relationship in object.entity.relationships {
            let related = object.relatedObjects(forKey: relationship.name).compactMap { $0 as? ManagedObject }
            if relationship.isToMany {
                addRow(label(relationship.name), "\(related.count)")
            } else {
                addHeading(label(relationship.name))
                if let target = related.first {
                    addAttributes(of: target) { label("\(relationship.name).\($0)") }
                } else {
                    addRow("", "None")
                }
            }
        }
    }

    /// Shows that `count` objects (`noun`: "teams") are selected, and what can be done
    /// with them, instead of one object's values.
    func showSelection(count: Int, noun: String) {
        clearGrid()
        title.isVisible = false
        placeholder.isVisible = true
        adw_status_page_set_icon_name(placeholder.opaque, "edit-select-all-symbolic")
        adw_status_page_set_title(placeholder.opaque, "\(count.formatted()) \(noun.prefix(1).uppercased() + noun.dropFirst()) Selected")
        adw_status_page_set_description(placeholder.opaque, "Delete deletes them all, and Undo brings them all back. Click a row to select it alone.")
    }

    /// Every text the pane shows, one a line: what a person reads, for tests and dumps.
    var text: String {
        widget.descendants.filter { $0.isA(gtk_label_get_type()) && gtk_widget_is_visible($0) != 0 }
            .map(labelText).filter { !$0.isEmpty }.joined(separator: "\n")
    }

    /// The attributes of `object`, each under its label (`label` of its key path), but `hidden`.
    private func addAttributes(of object: ManagedObject, label: (String) -> String, hiding hidden: String? = nil) {
        for attribute in object.entity.attributes where attribute.name != hidden {
            let value = ViewConfiguration.text(of: object, keyPath: attribute.name)
            addRow(label(attribute.name), value.isEmpty ? "—" : value)
        }
    }

    /// A value under its name; assistive technologies read the two as one, name first
    /// ("Team name: Algeria"), and not the name again on its own.
    private func addRow(_ name: String, _ value: String) {
        let valueLabel = makeLabel(value)
        let nameLabel = makeLabel(name, classes: ["dim-label"], xalign: 1)
        if !name.isEmpty {
            fr_accessible_set_text(valueLabel, GTK_ACCESSIBLE_PROPERTY_LABEL, "\(name): \(value)")
            fr_accessible_set_hidden(nameLabel, 1)
        }
        gtk_widget_set_valign(nameLabel, GTK_ALIGN_START)
        wrapAnywhere(valueLabel)
        gtk_label_set_selectable(valueLabel.opaque, 1)
        gtk_widget_set_hexpand(valueLabel, 1)
        gtk_grid_attach(grid.cast(), nameLabel, 0, gridRows, 1, 1)
        gtk_grid_attach(grid.cast(), valueLabel, 1, gridRows, 1, 1)
        gridRows += 1
    }

    private func addHeading(_ text: String) {
        gtk_grid_attach(grid.cast(), makeLabel(text, classes: ["detail-heading"]), 0, gridRows, 2, 1)
        gridRows += 1
    }

    private func clearGrid() {
        while let child = gtk_widget_get_first_child(grid) { gtk_grid_remove(grid.cast(), child) }
        gridRows = 0
    }
}
