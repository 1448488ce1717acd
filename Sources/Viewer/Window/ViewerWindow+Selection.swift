import CGtk
import Datasets
import FetchedResults
import GtkBinding
import ObjectStore

/// The selection: where the focus goes when the selected row moves, and the detail pane.
extension ViewerWindow {
    func selectionChanged(_ event: FetchedResultsSelection<ManagedObject>.Event) {
        switch event {
        case .selected:
            notice = nil
        case .followed:
            guard followsSelectionOnce else { break }
            followsSelectionOnce = false
            keepFocusOnSelection()
            revealSectionHeader()
        case .removed(let object, _):
            // A deleted object's values are gone: its title as last shown.
            let name = selectedTitle ?? object.objectID.description
            let gone = object.isDeleted || object.managedObjectContext == nil
            notice = gone ? "“\(name)” was deleted." : "“\(name)” is no longer in the list."
            keepFocusOnSelection()
        }
        refreshDetail()
    }

    /// Moves the keyboard focus (where the arrows and Enter start) to the selected row when the list has
    /// it: GTK's focus stays at the old position when the selected row moves, so the arrows
    /// would move on from whichever team took its place.
    func keepFocusOnSelection(retry: Bool = true) {
        guard let session, let object = session.selection.selectedObject, let position = session.selection.selectedPosition else { return }
        let focus = gtk_root_get_focus(OpaquePointer(window))
        guard focus == nil || gtk_widget_is_ancestor(focus, listView) != 0 || focus == listView else { return }
        if let row = factory?.rowWidget(showing: object.objectID), gtk_widget_get_mapped(row) != 0 {
            gtk_widget_grab_focus(row)  // GTK scrolls to the focused row when it is out of view
        } else if retry {
            // A row far away gets its widget once GTK has scrolled to it and laid the list out.
            gtk_widget_activate_action_variant(listView, "list.scroll-to-item", g_variant_new_uint32(guint32(position)))
            MainLoop.idle(priority: G_PRIORITY_DEFAULT_IDLE) { [weak self] in self?.keepFocusOnSelection(retry: false) }
        }
    }

    /// Scrolls the header of the selected row's section into view when the row is the
    /// section's first: GTK keeps a moved row where the list was anchored, which can leave
    /// the header of its new place just above the top.
    func revealSectionHeader() {
        guard let session, let position = session.selection.selectedPosition, let indexPath = session.rows.indexPath(at: position),
              indexPath.item == 0, let header = session.rows.position(forSectionHeader: indexPath.section) else { return }
        gtk_widget_activate_action_variant(listView, "list.scroll-to-item", g_variant_new_uint32(guint32(header)))
    }

    /// Shows the selected object (or the notice of what became of it) in the detail pane.
    func refreshDetail() {
        let object = session?.selection.selectedObject
        if let object, let session, !object.isDeleted, object.managedObjectContext != nil {
            selectedTitle = ViewConfiguration.render(session.view.row.title, for: object)
        }
        detail.show(object, view: session?.view, notice: notice)
        updateButtons()
        didUpdate?()
    }
}
