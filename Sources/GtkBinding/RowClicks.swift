import CFetchedResultsModel
import CGtk

/// Clicks on a list whose rows move under a still pointer.
///
/// GTK 4.8 gives a button press to the widget the pointer was last seen over, and looks
/// again only when the pointer moves, when that widget is unmapped, or on a release. A list
/// that follows a controller moves rows under the pointer: a +1 button that moves its row
/// up, a change another process saved. The next press then goes to a row that moved away
/// (or to the list itself) and is lost; the release looks again, so the click after it
/// works: every other click counts.
///
/// ``retargetClicks(in:)`` adds a click gesture to the list, in the capture phase, that sees
/// each press first. GTK marks the widgets it believes are under the pointer as hovered;
/// when the widget actually under the pointer is not, the gesture takes the click and gives
/// it to that widget, as its own gestures would have: a button or check button inside a row
/// is activated, a row is selected (Ctrl and Shift as usual) and activated on a
/// double-click. Presses that go where the pointer is are left to GTK.
///
/// ```swift
/// let listView = gtk_list_view_new(selection, factory)!
/// RowClicks.retargetClicks(in: listView)
/// ```
@MainActor
public enum RowClicks {
    /// Adds the gesture to `listView` (a `GtkListView`, or any widget whose children are
    /// rows) and returns it; the widget owns it.
    @discardableResult
    public static func retargetClicks(in listView: UnsafeMutablePointer<GtkWidget>) -> OpaquePointer {
        OpaquePointer(fr_list_retarget_clicks(UnsafeMutableRawPointer(listView)))
    }
}
