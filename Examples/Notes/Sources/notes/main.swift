// Notes: folders of notes in a GTK list, sectioned by folder, kept in step with the store by
// a fetched results controller. Type a title and press Enter to add a note to the selected
// note's folder. A note's ★ button stars it, which moves it to the top of its folder; Enter
// on a note (or a double-click) puts its title in the entry to rename it. What the app does
// is printed ("starred: …", "editing: …").
//
// The rows come from GtkBinding's kit: a ListItemFactory, shown by a FetchedResultsListView,
// which has on by default the clicks on rows that move under a still pointer (RowClicks), the
// rows on screen kept still while a tap moves one of them (ListAnchor), and the keyboard
// focus kept on the selected row when a tap moves it (SelectionFocus), so that Enter after a
// ★ edits the note instead of pressing whichever button GTK gave the focus to.
//
//   notes [--store FILE] [--demo]
//
// --demo makes, once the window shows, an unsaved edit in the window's context and a save in
// a background context, then prints what the list shows ("shown: ...").
import CGtk
import Dispatch
import FetchedResults
import Foundation
import GtkBinding
import ObjectStore

final class Folder: ManagedObject {
    @Attribute var name: String
    @Relationship(inverse: "folder", deleteRule: .cascade) var notes: Set<Note>
}

final class Note: ManagedObject {
    @Attribute(minLength: 1) var title: String
    @Attribute(default: false) var starred: Bool
    @Relationship var folder: Folder?
}

let model = try Model(classes: [Folder.self, Note.self])

let arguments = CommandLine.arguments
let demo = arguments.contains("--demo")
let storeURL = arguments.firstIndex(of: "--store").map { URL(fileURLWithPath: arguments[$0 + 1]) }
    ?? FileManager.default.temporaryDirectory.appendingPathComponent("notes-\(getpid()).sqlite")
let store = try PersistentStore(url: storeURL, model: model)
try store.insertInitialContents { context in
    for (folderName, titles) in [("Home", ["Buy milk", "Fix the tap"]), ("Work", ["Write the report"])] {
        let folder = try context.insert(Folder.self)
        folder.name = folderName
        for title in titles {
            let note = try context.insert(Note.self)
            note.title = title
            note.folder = folder
        }
    }
}

/// The window: a title entry over the list of notes by folder. GTK code is main-actor code.
@MainActor final class NotesWindow {
    let context = ObjectContext(store: store)  // on the main queue, as GTK is
    let controller: FetchedResultsController<Note>
    let rows: FetchedResultsListModel<Note>
    let selection: FetchedResultsSelection<Note>
    let factory: ListItemFactory<Note>
    let list: FetchedResultsListView<Note>
    let window: Widget
    let entry: Widget
    /// The note being renamed (Enter on a note), else nil: the entry adds a note.
    var renaming: Note?

    init(application: UnsafeMutablePointer<GtkApplication>) throws {
        controller = FetchedResultsController(
            fetchRequest: FetchRequest<Note>(sortDescriptors: [FetchSortDescriptor(key: "folder.name"), FetchSortDescriptor(key: "starred", ascending: false),
                                                               FetchSortDescriptor(key: "title")]),
            managedObjectContext: context, sectionNameKeyPath: "folder.name")
        rows = try FetchedResultsListModel(controller: controller)  // fetches, and follows every change
        selection = FetchedResultsSelection(rows: rows)
        weak var weakRows = rows
        factory = ListItemFactory(rows: rows, setup: { listItem in
            // A title and a ★ button, which stars the row's note.
            let label = gtk_label_new(nil)!
            gtk_label_set_xalign(OpaquePointer(label), 0)
            gtk_widget_set_hexpand(label, 1)
            let star = gtk_button_new_with_label("☆")!
            gtk_widget_add_css_class(star, "flat")
            let box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6)!
            gtk_box_append(box.cast(), label)
            gtk_box_append(box.cast(), star)
            gtk_list_item_set_child(listItem, box)
            Signal.connect(star.object, "clicked") {
                guard let rows = weakRows, let item = gtk_list_item_get_item(listItem),
                      case .object(let id)? = rows.identity(ofItem: item), let note = rows.object(for: id) else { return }
                notesWindow?.toggleStar(of: note)
            }
        }, bind: { listItem, content in
            let box = gtk_list_item_get_child(listItem)!
            let label = OpaquePointer(gtk_widget_get_first_child(box))
            let star = gtk_widget_get_last_child(box)!
            switch content {
            case .header(let folder):
                gtk_label_set_markup(label, "<b>\(folder)</b>")
                gtk_widget_set_visible(star, 0)
            case .object(let note):
                gtk_label_set_text(label, "    " + note.title)
                gtk_widget_set_visible(star, 1)
                gtk_button_set_label(star.cast(), note.starred ? "★" : "☆")
                gtk_widget_set_tooltip_text(star, note.starred ? "Unstar" : "Star")
            }
        })
        window = gtk_application_window_new(application)
        gtk_window_set_title(window.cast(), "Notes")
        gtk_window_set_default_size(window.cast(), 360, 420)
        entry = gtk_entry_new()!
        gtk_entry_set_placeholder_text(entry.cast(), "New note title")
        // The kit's list view: clicks reach the row under the pointer, the rows on screen
        // stay where they are, and the focus stays on the selected row, with no code here.
        list = FetchedResultsListView(selection: selection, factory: factory)
        let listView = list.widget
        let scrolled = gtk_scrolled_window_new()!
        gtk_scrolled_window_set_child(scrolled.opaque, listView)
        gtk_widget_set_vexpand(scrolled, 1)
        let box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6)!
        gtk_box_append(box.cast(), entry)
        gtk_box_append(box.cast(), scrolled)
        gtk_window_set_child(window.cast(), box)
        Signal.connect(entry.object, "activate") { [weak self] in self?.entryActivated() }
        Signal.connect(listView.object, "activate") { [weak self] (position: guint) in
            guard let self, let indexPath = self.rows.indexPath(at: Int(position)) else { return }
            self.startRenaming(self.controller.object(at: indexPath))
        }
    }

    /// Stars or unstars `note` and saves: it moves to the top of its folder, or back.
    func toggleStar(of note: Note) {
        selection.select(note)
        note.starred.toggle()
        do {
            try context.save()
            say("\(note.starred ? "starred" : "unstarred"): \(note.title)")
        } catch {
            context.rollback()
            say("not saved: \(error)")
        }
    }

    /// Puts `note`'s title in the entry, where Enter renames it.
    private func startRenaming(_ note: Note) {
        selection.select(note)
        renaming = note
        gtk_editable_set_text(entry.opaque, note.title)
        gtk_widget_grab_focus(entry)
        say("editing: \(note.title)")
    }

    private func entryActivated() {
        let title = String(cString: gtk_editable_get_text(entry.opaque)).trimmingCharacters(in: .whitespaces)
        guard !title.isEmpty else { return }
        if let note = renaming {
            renaming = nil
            note.title = title
            do {
                try context.save()
                gtk_editable_set_text(entry.opaque, "")
            } catch {
                context.rollback()
                say("not saved: \(error)")
            }
        } else {
            add(title: title)
        }
    }

    /// Prints what the app did, for whoever reads its output.
    private func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// Adds a note titled `title` to the selected note's folder (else the first) and saves.
    private func add(title: String) {
        do {
            let note = try context.insert(Note.self)
            note.title = title
            note.folder = selection.selectedObject?.folder ?? controller.fetchedObjects?.first?.folder
            try context.save()
            gtk_editable_set_text(entry.opaque, "")
            selection.select(note)
        } catch {
            context.rollback()
            print("not saved: \(error)")
        }
    }

    /// An unsaved edit here and a save of another context: both reach the list by themselves.
    func runDemo() throws {
        let draft = try context.insert(Note.self)
        draft.title = "Unsaved draft"
        draft.folder = controller.fetchedObjects?.first?.folder
        let background = ObjectContext(store: store, queue: DispatchQueue(label: "background"))
        background.perform {
            do {
                let folder = try background.insert(Folder.self)
                folder.name = "Shared"
                let note = try background.insert(Note.self)
                note.title = "Saved in the background"
                note.folder = folder
                try background.save()
            } catch {
                print("not saved in the background: \(error)")
            }
        }
    }

    /// What the list shows, as one line.
    var shownText: String {
        (0..<rows.count).map { position -> String in
            switch rows.item(at: position) {
            case .header(let section): return "[\(controller.sections?[section].name ?? "")]"
            case .object(_, let indexPath): return controller.object(at: indexPath).title
            }
        }.joined(separator: " | ")
    }
}

let application = gtk_application_new("org.fetchedresults.Notes", G_APPLICATION_NON_UNIQUE)!
nonisolated(unsafe) var notesWindow: NotesWindow?
Signal.connect(UnsafeMutableRawPointer(application), "activate") {
    do {
        let window = try NotesWindow(application: application)
        notesWindow = window
        gtk_window_present(window.window.cast())
        guard demo else { return }
        try window.runDemo()
        MainLoop.after(milliseconds: 1_000) {
            FileHandle.standardOutput.write(Data("shown: \(window.shownText)\n".utf8))
        }
    } catch {
        print("cannot open the notes: \(error)")
        g_application_quit(UnsafeMutableRawPointer(application).assumingMemoryBound(to: GApplication.self))
    }
}
// Our options are ours: GApplication sees none of them.
exit(g_application_run(UnsafeMutableRawPointer(application).assumingMemoryBound(to: GApplication.self), 1, CommandLine.unsafeArgv))
