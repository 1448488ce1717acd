import CAdw
import CGtk
import GtkBinding

/// The About window and the Keyboard Shortcuts window (Ctrl+?).
extension ViewerWindow {
    /// The version the About window shows (the command line's `--version`).
    package static var version = "0.1.0"

    func showAbout() {
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

    func showShortcuts() {
        let builder = gtk_builder_new_from_string(Self.shortcutsUI, -1)!
        defer { g_object_unref(UnsafeMutableRawPointer(builder)) }
        guard let shortcuts = gtk_builder_get_object(builder, "shortcuts") else { return }
        let shortcutsWindow = UnsafeMutableRawPointer(shortcuts).assumingMemoryBound(to: GtkWindow.self)
        gtk_window_set_transient_for(shortcutsWindow, window.cast())
        gtk_window_set_modal(shortcutsWindow, 1)
        gtk_window_present(shortcutsWindow)
    }

    private static let shortcutsUI = """
        <interface>
          <object class="GtkShortcutsWindow" id="shortcuts">
            <child><object class="GtkShortcutsSection"><property name="section-name">viewer</property>
              <child><object class="GtkShortcutsGroup"><property name="title">List</property>
                <child><object class="GtkShortcutsShortcut"><property name="title">Move the selection</property><property name="accelerator">Up Down Page_Up Page_Down</property></object></child>
                <child><object class="GtkShortcutsShortcut"><property name="title">First and last row</property><property name="accelerator">Home End</property></object></child>
                <child><object class="GtkShortcutsShortcut"><property name="title">Search</property><property name="accelerator">&lt;Control&gt;f</property></object></child>
                <child><object class="GtkShortcutsShortcut"><property name="title">End the search</property><property name="accelerator">Escape</property></object></child>
              </object></child>
              <child><object class="GtkShortcutsGroup"><property name="title">Editing</property>
                <child><object class="GtkShortcutsShortcut"><property name="title">Add</property><property name="accelerator">&lt;Control&gt;n</property></object></child>
                <child><object class="GtkShortcutsShortcut"><property name="title">Edit the selected row</property><property name="accelerator">Return &lt;Control&gt;e</property></object></child>
                <child><object class="GtkShortcutsShortcut"><property name="title">Delete the selected row</property><property name="accelerator">Delete</property></object></child>
                <child><object class="GtkShortcutsShortcut"><property name="title">Undo</property><property name="accelerator">&lt;Control&gt;z</property></object></child>
                <child><object class="GtkShortcutsShortcut"><property name="title">Import a CSV or JSON-lines file</property><property name="accelerator">&lt;Control&gt;o</property></object></child>
              </object></child>
              <child><object class="GtkShortcutsGroup"><property name="title">General</property>
                <child><object class="GtkShortcutsShortcut"><property name="title">Main menu</property><property name="accelerator">F10</property></object></child>
                <child><object class="GtkShortcutsShortcut"><property name="title">Keyboard shortcuts</property><property name="accelerator">&lt;Control&gt;question</property></object></child>
                <child><object class="GtkShortcutsShortcut"><property name="title">Close the window</property><property name="accelerator">&lt;Control&gt;w &lt;Control&gt;q</property></object></child>
              </object></child>
            </object></child>
          </object>
        </interface>
        """
}
