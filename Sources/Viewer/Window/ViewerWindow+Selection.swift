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
            revealSelection(headerAtOnce: true)
        case .removed(let object, _):
            // A deleted object's values are gone: its title as last shown.
            // (One that only left the list, by a search or another program's change, goes
            // without a word: the list shows where it went.)
            let name = selectedTitle ?? object.objectID.description
            let undoable = session?.edits.canUndo == true
            // Replaced by an object of the same title, selected instead, in the same change
            // from elsewhere: for the person nothing was deleted (a store joining a shared
            // list gives its own copy of the seed up for the server's).
            let replaced = !undoable && session.flatMap { session in
                session.selection.selectedObject.map { ViewConfiguration.render(session.view.row.title, for: $0) }
            } == name
            if (object.isDeleted || object.managedObjectContext == nil) && !replaced && !rowsDeletedTogether.contains(object.objectID) {
                showToast(undoable ? "\(quoted(name)) deleted" : "\(quoted(name)) was deleted", undo: undoable)
            }
            keepFocusOnSelection()
            // The row selected instead may head its section (a search's first match).
            revealSelection()
        }
        refreshDetail()
    }

    /// Moves the keyboard focus (where the arrows and Enter start) to the selected row when the list has
    /// it, else scrolls the row into view: GTK's focus stays at the old position when the selected row moves, so the arrows
    /// would move on from whichever team took its place.
    /// `onScreenOnly`: only when the row is on screen, so that the list does not scroll (a
    /// change from elsewhere leaves the view where the person put it).
    func keepFocusOnSelection(retry: Bool = true, onScreenOnly: Bool = false) {
        guard let session, let object = session.selection.selectedObject, let position = session.selection.selectedPosition else { return }
        // A moved row's old widget, taken out of the list, keeps the window's focus until
        // GTK's next layout: it counts as no focus.
        let focus = gtk_root_get_focus(OpaquePointer(window)).flatMap { gtk_widget_get_root($0) != nil ? $0 : nil }
        if let focus, gtk_widget_is_ancestor(focus, searchBar) != 0 { openingFocusTries = 0 }
        guard focusLostWithItsRow || openingFocusTries > 0 || focus == nil || gtk_widget_is_ancestor(focus, listView) != 0 || focus == listView else {
            // The focus is elsewhere (the search entry, the menu that changed the sort): the
            // row comes into view, the focus stays.
            gtk_widget_activate_action_variant(listView, "list.scroll-to-item", g_variant_new_uint32(guint32(position)))
            return
        }
        if let row = factory?.rowWidget(showing: object.objectID), gtk_widget_get_mapped(row) != 0, !onScreenOnly || selectionFocus.isOnScreen(row) {
            gtk_widget_grab_focus(row)  // GTK scrolls to the focused row when it is out of view
            openingFocusTries = 0
            focusLostWithItsRow = false
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

    /// GTK 4.8 drops the widget of a row that moved or went at the list's next layout. When
    /// that widget had the keyboard focus, GTK gives the focus to the first widget that takes
    /// it: a row's +1 or the header's Undo, where Enter would add a win or undo one instead of
    /// editing. GtkBinding's `SelectionFocus` sees it; the focus goes back to the selected row
    /// before the next key is handled, or once the selection has followed the change that
    /// moved it (`focusLostWithItsRow`), by the window's own `keepFocusOnSelection`, which
    /// also knows the window opening and the search.
    func watchFocusLostWithItsRow() -> SelectionFocus {
        let focus = SelectionFocus(listView: listView) { [weak self] in
            self?.session?.selection.selectedObject.flatMap { self?.factory?.rowWidget(showing: $0.objectID) }
        }
        focus.repair = { [weak self] in self?.keepFocusOnSelection(retry: false, onScreenOnly: true) }
        return focus
    }

    /// Brings the selected row fully into view, with its section's header when it is the
    /// section's first, looking after each frame is drawn (up to `tries` frames), when the
    /// rows' places are those on screen: GTK 4.8 can leave a row it scrolled to partly out of
    /// view, and does not scroll to a section's header when arrowing up into the section.
    ///
    /// `headerAtOnce`: the header is above the row's place (arrowing up; a tap or an edit
    /// that moved the row, which GTK keeps where the list was anchored, its new section's
    /// header just above the top), so the list scrolls to it now, in the same frame as the
    /// move: a frame later, clicks following each other fast would land on rows that moved
    /// under the pointer. Arrowing down into a section brings the row in at the bottom with
    /// its header above it: scrolling to the header then (as the window once did) left the
    /// row below the bottom edge.
    func revealSelection(headerAtOnce: Bool = false, tries: Int = 10) {
        if headerAtOnce, let session, let position = session.selection.selectedPosition,
           let indexPath = session.rows.indexPath(at: position), indexPath.item == 0,
           let header = session.rows.position(forSectionHeader: indexPath.section) {
            gtk_widget_activate_action_variant(listView, "list.scroll-to-item", g_variant_new_uint32(guint32(header)))
        }
        guard tries > 0 else { return }
        afterNextFrame { [weak self] in
            guard let self, let session = self.session, let object = session.selection.selectedObject,
                  let position = session.selection.selectedPosition else { return }
            guard let row = self.factory?.rowWidget(showing: object.objectID) else {
                // Not laid out yet (the focus or a scroll to it is on its way): look again.
                return self.revealSelection(tries: tries - 1)
            }
            var target: Int?
            if !self.isFullyOnScreen(row) {
                target = position
            } else if let indexPath = session.rows.indexPath(at: position), indexPath.item == 0,
                      let header = session.rows.position(forSectionHeader: indexPath.section),
                      let name = session.controller.sections?[indexPath.section].name,
                      !(self.factory?.headerWidget(named: name).map(self.isFullyOnScreen) ?? false) {
                target = header
            }
            guard let target else { return }
            gtk_widget_activate_action_variant(self.listView, "list.scroll-to-item", g_variant_new_uint32(guint32(target)))
            self.revealSelection(tries: tries - 1)
        }
    }

    /// Runs `body` once, after the window's next frame is drawn. None is asked for: a move,
    /// a scroll or a row laid out draws one (forcing frames under a burst of taps would
    /// keep the main loop drawing while the clicks wait).
    private func afterNextFrame(_ body: @escaping () -> Void) {
        guard let clock = gtk_widget_get_frame_clock(listView) else { return }
        let object = g_object_ref(UnsafeMutableRawPointer(clock))!
        var handler: gulong = 0
        var done = false
        handler = Signal.connect(object, "after-paint") {
            guard !done else { return }
            done = true
            // Disconnected outside the emission, which holds the closure.
            MainLoop.idle {
                g_signal_handler_disconnect(object, handler)
                g_object_unref(object)
            }
            body()
        }
    }

    /// Whether all of `row` shows in the list's scrolled window.
    func isFullyOnScreen(_ row: Widget) -> Bool {
        RowPlace(of: row, in: listView)?.isWhollyShown ?? false
    }

    /// Shows the selected object in the detail pane, and the list or its status page.
    func refreshDetail() {
        let object = session?.selection.selectedObject
        if let object, let session, !object.isDeleted, object.managedObjectContext != nil {
            selectedTitle = ViewConfiguration.render(session.view.row.title, for: object)
        }
        if let session, case let count = session.selection.selectedCount, count > 1 {
            detail.showSelection(count: count, noun: session.rowNoun(count))
        } else {
            detail.show(object, view: session?.view)
        }
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
