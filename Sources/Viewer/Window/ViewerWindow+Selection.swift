import CAdw
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
            break
        case .followed:
            guard followsSelectionOnce else { break }
            followsSelectionOnce = false
            keepFocusOnSelection()
            revealSectionHeader()
        case .removed(let object, _):
            // A deleted object's values are gone: its title as last shown.
            // (One that only left the list, by a search or another program's change, goes
            // without a word: the list shows where it went.)
            let name = selectedTitle ?? object.objectID.description
            if object.isDeleted || object.managedObjectContext == nil {
                let undoable = session?.edits.canUndo == true
                showToast(undoable ? "“\(name)” deleted" : "“\(name)” was deleted", undo: undoable)
            }
            keepFocusOnSelection()
            // The row selected instead may head its section (a search's first match).
            revealSectionHeader()
        }
        refreshDetail()
    }

    /// Moves the keyboard focus (where the arrows and Enter start) to the selected row when the list has
    /// it, else scrolls the row into view: GTK's focus stays at the old position when the selected row moves, so the arrows
    /// would move on from whichever team took its place.
    func keepFocusOnSelection(retry: Bool = true) {
        guard let session, let object = session.selection.selectedObject, let position = session.selection.selectedPosition else { return }
        let focus = gtk_root_get_focus(OpaquePointer(window))
        if let focus, gtk_widget_is_ancestor(focus, searchBar) != 0 { openingFocusTries = 0 }
        guard openingFocusTries > 0 || focus == nil || gtk_widget_is_ancestor(focus, listView) != 0 || focus == listView else {
            // The focus is elsewhere (the search entry, the menu that changed the sort): the
            // row comes into view, the focus stays.
            gtk_widget_activate_action_variant(listView, "list.scroll-to-item", g_variant_new_uint32(guint32(position)))
            return
        }
        if let row = factory?.rowWidget(showing: object.objectID), gtk_widget_get_mapped(row) != 0 {
            gtk_widget_grab_focus(row)  // GTK scrolls to the focused row when it is out of view
            openingFocusTries = 0
        } else if openingFocusTries > 0 {
            // The window opening: its rows are mapped after its first frame (a window never
            // shown stops trying after a second).
            openingFocusTries -= 1
            MainLoop.after(milliseconds: 20) { [weak self] in self?.keepFocusOnSelection(retry: false) }
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

    /// Shows the selected object in the detail pane, and the list or its status page.
    func refreshDetail() {
        let object = session?.selection.selectedObject
        if let object, let session, !object.isDeleted, object.managedObjectContext != nil {
            selectedTitle = ViewConfiguration.render(session.view.row.title, for: object)
        }
        detail.show(object, view: session?.view)
        showEmptyState()
        updateButtons()
        didUpdate?()
    }
}

extension ViewerWindow {
    /// The list, or when it has no rows a status page: "Loading…" while the first rows are
    /// fetched, "No Results" for a search, else what the dataset would show and how to add it.
    func showEmptyState() {
        guard let session else { return }
        let empty = session.rows.count == 0
        if empty && session.isLoading {
            adw_status_page_set_icon_name(emptyPage.opaque, nil)
            adw_status_page_set_title(emptyPage.opaque, "Loading…")
            adw_status_page_set_description(emptyPage.opaque, nil)
            gtk_spinner_start(loadingSpinner.opaque)
            loadingSpinner.isVisible = true
        } else if empty {
            let searching = gtk_search_bar_get_search_mode(searchBar.opaque) != 0
                && gtk_editable_get_text(OpaquePointer(searchEntry)).map { $0.pointee != 0 } == true
            let noun = ViewConfiguration.words(session.controller.fetchRequest.entityName)
            adw_status_page_set_icon_name(emptyPage.opaque, searching ? "system-search-symbolic" : "view-list-symbolic")
            adw_status_page_set_title(emptyPage.opaque, searching ? "No Results" : "Nothing Here Yet")
            adw_status_page_set_description(emptyPage.opaque, searching
                ? "No \(noun.lowercased()) matches the search."
                : addButton.isVisible ? "Add a \(noun.lowercased()) with the + button." : nil)
        }
        if !(empty && session.isLoading) {
            gtk_spinner_stop(loadingSpinner.opaque)
            loadingSpinner.isVisible = false
        }
        gtk_stack_set_visible_child_name(listStack.opaque, empty ? "empty" : "list")
    }
}
