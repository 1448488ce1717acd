import CAdw
import CGtk
import Datasets
import Foundation
import GtkBinding

/// The About window, the Keyboard Shortcuts window (Ctrl+?) and the help page (F1).
extension ViewerWindow {
    /// The version the About window shows (the command line's `--version`).
    package static var version = "0.1.0"

    func showAbout() {
        Self.findIconsOfTheBuildTree()
        let about = adw_about_window_new()!
        adw_about_window_set_application_name(about.opaque, "Fetched Results")
        adw_about_window_set_application_icon(about.opaque, ViewerApplication.applicationID)
        adw_about_window_set_version(about.opaque, Self.version)
        adw_about_window_set_developer_name(about.opaque, "The FetchedResults developers")
        adw_about_window_set_comments(about.opaque, "Lists that follow their store live: Core Data's fetched results controller for Swift on Linux.")
        adw_about_window_set_license_type(about.opaque, GTK_LICENSE_MIT_X11)
        adw_about_window_set_website(about.opaque, "https://github.com/fetchedresults/fetched-results")
        adw_about_window_set_issue_url(about.opaque, "https://github.com/fetchedresults/fetched-results/issues")
        gtk_window_set_transient_for(about.cast(), window.cast())
        gtk_window_set_modal(about.cast(), 1)
        gtk_window_present(about.cast())
    }

    /// Run from the build tree, the app's icon is in the source tree's `data/icons`, which no
    /// icon theme searches (installed, meson puts it in `share/icons`): the display's theme
    /// is told of it once, so that the About window and the window's icon show it.
    static func findIconsOfTheBuildTree() {
        guard !iconsSearched, let display = gdk_display_get_default() else { return }
        iconsSearched = true
        let theme = gtk_icon_theme_get_for_display(display)
        guard gtk_icon_theme_has_icon(theme, ViewerApplication.applicationID) == 0,
              let worldcup = try? Dataset.locate(named: "worldcup") else { return }
        let icons = worldcup.deletingLastPathComponent().appendingPathComponent("icons")
        if FileManager.default.fileExists(atPath: icons.path) { gtk_icon_theme_add_search_path(theme, icons.path) }
    }

    private static var iconsSearched = false

    /// The help page: installed, `share/fetched-results/help/index.html` beside the
    /// executable's `bin`; run from the build tree, the source tree's `data/help/index.html`
    /// (found as the datasets are). Nil when neither is there.
    static var helpPage: URL? {
        let executable = (Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments.first ?? ".")).resolvingSymlinksInPath()
        let installed = executable.deletingLastPathComponent().appendingPathComponent("../share/fetched-results/help/index.html").standardized
        let source = (try? Dataset.locate(named: "worldcup"))?.deletingLastPathComponent().appendingPathComponent("help/index.html")
        return [installed, source].compactMap { $0 }.first { FileManager.default.fileExists(atPath: $0.path) }
    }

    /// Opens the help page in the desktop's browser; says where it is when no program can
    /// show it.
    func showHelp() {
        guard let page = Self.helpPage else { return showToast("The help page is not installed") }
        shownHelp = page
        var error: UnsafeMutablePointer<GError>?
        if g_app_info_launch_default_for_uri(page.absoluteString, nil, &error) == 0 {
            let reason = error.map { String(cString: $0.pointee.message) } ?? "no program opens web pages"
            if let error { g_error_free(error) }
            showToast("Cannot open the help (\(reason)): it is \(page.path)")
        }
    }
    func showShortcuts() {
        let builder = gtk_builder_new_from_string(Self.shortcutsUI(counterAction: session?.view.counterAction), -1)!
        defer { g_object_unref(UnsafeMutableRawPointer(builder)) }
        guard let shortcuts = gtk_builder_get_object(builder, "shortcuts") else { return }
        let shortcutsWindow = UnsafeMutableRawPointer(shortcuts).assumingMemoryBound(to: GtkWindow.self)
        Self.nameKeysAsPrinted(in: UnsafeMutableRawPointer(shortcuts).assumingMemoryBound(to: GtkWidget.self))
        gtk_window_set_transient_for(shortcutsWindow, window.cast())
        gtk_window_set_modal(shortcutsWindow, 1)
        gtk_window_present(shortcutsWindow)
    }

    /// GTK 4.8's shortcut labels show some keys by their key names ("Page_Up"), untranslated
    /// in an English session: this names them as the keys are printed.
    private static func nameKeysAsPrinted(in widget: UnsafeMutablePointer<GtkWidget>) {
        let printed = ["Page_Up": "Page Up", "Page_Down": "Page Down"]
        if g_type_check_instance_is_a(UnsafeMutableRawPointer(widget).assumingMemoryBound(to: GTypeInstance.self), gtk_label_get_type()) != 0,
           let text = gtk_label_get_text(widget.opaque).map({ String(cString: $0) }), let name = printed[text] {
            gtk_label_set_text(widget.opaque, name)
        }
        var child = gtk_widget_get_first_child(widget)
        while let current = child {
            nameKeysAsPrinted(in: current)
            child = gtk_widget_get_next_sibling(current)
        }
    }

    /// The shortcuts window's UI; with the + row when the dataset has a counter, titled with
    /// its action ("Add a win").
    private static func shortcutsUI(counterAction: String?) -> String {
        let counter = counterAction.map { action in
            let title = action.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            return #"<child><object class="GtkShortcutsShortcut"><property name="title">\#(title)</property><property name="accelerator">plus</property></object></child>"#
        } ?? ""
        return shortcutsTemplate.replacingOccurrences(of: "<!-- counter -->", with: counter)
    }

    private static let shortcutsTemplate = """
        <interface>
          <object class="GtkShortcutsWindow" id="shortcuts">
            <child><object class="GtkShortcutsSection"><property name="section-name">viewer</property>
              <child><object class="GtkShortcutsGroup"><property name="title">List</property>
                <child><object class="GtkShortcutsShortcut"><property name="title">Move the selection</property><property name="accelerator">Up Down Page_Up Page_Down</property></object></child>
                <child><object class="GtkShortcutsShortcut"><property name="title">First and last row</property><property name="accelerator">Home End</property></object></child>
                <child><object class="GtkShortcutsShortcut"><property name="title">Select every row (Ctrl-click adds a row, Shift-click a range)</property><property name="accelerator">&lt;Control&gt;a</property></object></child>
                <child><object class="GtkShortcutsShortcut"><property name="title">Search</property><property name="accelerator">&lt;Control&gt;f</property></object></child>
                <child><object class="GtkShortcutsShortcut"><property name="title">End the search</property><property name="accelerator">Escape</property></object></child>
              </object></child>
              <child><object class="GtkShortcutsGroup"><property name="title">Editing</property>
                <child><object class="GtkShortcutsShortcut"><property name="title">Add</property><property name="accelerator">&lt;Control&gt;n</property></object></child>
                <child><object class="GtkShortcutsShortcut"><property name="title">Edit the selected row</property><property name="accelerator">Return &lt;Control&gt;e</property></object></child>
                <!-- counter -->
                <child><object class="GtkShortcutsShortcut"><property name="title">Delete the selected rows</property><property name="accelerator">Delete</property></object></child>
                <child><object class="GtkShortcutsShortcut"><property name="title">Undo</property><property name="accelerator">&lt;Control&gt;z</property></object></child>
                <child><object class="GtkShortcutsShortcut"><property name="title">Import a CSV or JSON-lines file</property><property name="accelerator">&lt;Control&gt;o</property></object></child>
              </object></child>
              <child><object class="GtkShortcutsGroup"><property name="title">General</property>
                <child><object class="GtkShortcutsShortcut"><property name="title">Main menu</property><property name="accelerator">F10</property></object></child>
                <child><object class="GtkShortcutsShortcut"><property name="title">Keyboard shortcuts</property><property name="accelerator">&lt;Control&gt;question</property></object></child>
                <child><object class="GtkShortcutsShortcut"><property name="title">Help</property><property name="accelerator">F1</property></object></child>
                <child><object class="GtkShortcutsShortcut"><property name="title">Close the window</property><property name="accelerator">&lt;Control&gt;w &lt;Control&gt;q</property></object></child>
              </object></child>
            </object></child>
          </object>
        </interface>
        """
}
