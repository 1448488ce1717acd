// Notes: folders of notes in a GTK list, sectioned by folder, kept in step with the store by
// a fetched results controller. Type a title and press Enter to add a note to the selected
// note's folder.
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
    let window: Widget

    init(application: UnsafeMutablePointer<GtkApplication>) throws {
        controller = FetchedResultsController(
            fetchRequest: FetchRequest<Note>(sortDescriptors: [FetchSortDescriptor(key: "folder.name"), FetchSortDescriptor(key: "title")]),
            managedObjectContext: context, sectionNameKeyPath: "folder.name")
        rows = try FetchedResultsListModel(controller: controller)  // fetches, and follows every change
        selection = FetchedResultsSelection(rows: rows)
        factory = ListItemFactory(rows: rows) { listItem, content in
            let label = OpaquePointer(gtk_list_item_get_child(listItem))
            gtk_label_set_xalign(label, 0)
            switch content {
            case .header(let folder): gtk_label_set_markup(label, "<b>\(folder)</b>")
            case .object(let note): gtk_label_set_text(label, "    " + note.title)
            }
        }
        window = gtk_application_window_new(application)
        gtk_window_set_title(window.cast(), "Notes")
        gtk_window_set_default_size(window.cast(), 360, 420)
        let entry = gtk_entry_new()!
        gtk_entry_set_placeholder_text(entry.cast(), "New note title")
        Signal.connect(entry.object, "activate") { [weak self] in self?.add(title: entry) }
        let listView = gtk_list_view_new(selection.selectionModelReference(), factory.factoryReference())!
        let scrolled = gtk_scrolled_window_new()!
        gtk_scrolled_window_set_child(scrolled.opaque, listView)
        gtk_widget_set_vexpand(scrolled, 1)
        let box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6)!
        gtk_box_append(box.cast(), entry)
        gtk_box_append(box.cast(), scrolled)
        gtk_window_set_child(window.cast(), box)
    }

    /// Adds a note titled as the entry says to the selected note's folder (else the first) and saves.
    private func add(title entry: Widget) {
        let title = String(cString: gtk_editable_get_text(entry.opaque)).trimmingCharacters(in: .whitespaces)
        guard !title.isEmpty else { return }
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
