import CAdw
import CGtk
import CViewer
import GtkBinding
import ObjectStore

/// The current section's header kept at the top of the list while the list scrolls: the
/// section of the first row shown, once that section's own header has scrolled above the
/// top. GTK 4.8's list view has no sticky headers; this is a label over the list.
///
/// Screen readers do not read it (the section headers in the list are headings), and it
/// takes no clicks: they go to the row under it.
@MainActor final class StickyHeader {
    private let label: Widget
    /// The section title it shows now; nil while hidden.
    private(set) var text: String?
    /// The title to show now (see ``ViewerWindow/sectionTitleAboveTop()``).
    var titleAboveTop: () -> String? = { nil }

    init() {
        label = makeLabel(classes: ["section-header", "sticky-header"])
        gtk_widget_set_valign(label, GTK_ALIGN_START)
        gtk_widget_set_can_target(label, 0)
        fr_accessible_set_hidden(label, 1)
        label.isVisible = false
    }

    /// An overlay of `scrolled` (the list's scrolled window) with the header over its top;
    /// the header follows the list as it scrolls.
    func wrap(_ scrolled: Widget) -> Widget {
        let overlay = gtk_overlay_new()!
        fr_accessible_set_text(overlay, GTK_ACCESSIBLE_PROPERTY_LABEL, "Rows")
        gtk_overlay_set_child(overlay.opaque, scrolled)
        gtk_overlay_add_overlay(overlay.opaque, label)
        if let adjustment = gtk_scrolled_window_get_vadjustment(scrolled.opaque) {
            Signal.connect(UnsafeMutableRawPointer(adjustment), "value-changed") { [weak self] in self?.updateSoon() }
        }
        // After each frame that follows a scroll or a change, the rows are where they show.
        Signal.connect(overlay.object, "realize") { [weak self] in
            guard let clock = gtk_widget_get_frame_clock(overlay) else { return }
            Signal.connect(UnsafeMutableRawPointer(clock), "after-paint") { [weak self] in
                guard let self, self.updatePending else { return }
                self.updatePending = false
                self.update()
            }
        }
        return overlay
    }

    private var updatePending = false

    /// Updates once GTK has laid the rows out at their new places (after the next frame).
    func updateSoon() {
        updatePending = true
        if let overlay = gtk_widget_get_parent(label) { gtk_widget_queue_draw(overlay) }
    }

    /// Shows the section the list shows at its top now, or nothing when its header shows.
    func update() {
        let title = titleAboveTop()
        guard title != text else { return }
        text = title
        if let title { gtk_label_set_text(label.opaque, title) }
        label.isVisible = title != nil
    }
}

extension ViewerWindow {
    /// The title of the section of the first row at the top of the list, when that section's
    /// header is not wholly shown there; nil when it is, or when the list has no sections.
    func sectionTitleAboveTop() -> String? {
        guard let session, let factory, session.rows.showsSectionHeaders else { return nil }
        var first: (top: Float, position: Int)?
        for listItem in factory.items.boundListItems {
            guard let row = ListItemFactory<ManagedObject>.rowWidget(of: listItem), let place = RowPlace(of: row, in: listView),
                  place.bottom > 1, place.top < place.shownHeight, place.top < first?.top ?? .infinity else { continue }
            first = (place.top, Int(gtk_list_item_get_position(listItem)))
        }
        guard let first else { return nil }
        let section: Int
        switch session.rows.item(at: first.position) {
        case .header(let index):
            if first.top >= -1 { return nil }  // the header itself shows
            section = index
        case .object(_, let indexPath):
            section = indexPath.section
        }
        guard let sections = session.controller.sections, sections.indices.contains(section) else { return nil }
        return session.view.sectionTitle(forSectionName: sections[section].name)
    }
}
