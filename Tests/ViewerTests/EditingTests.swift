import CGtk
import GtkBinding
import Datasets
import Foundation
import ObjectStore
@testable import Viewer
import XCTest

/// The Add and Edit dialogs, Delete and Undo.
final class EditingTests: ViewerTestCase, @unchecked Sendable {
    @MainActor private func type(_ text: String, into editor: FieldEditor) {
        editor.text = text
    }

    /// The Edit dialog of `dataset` on the object titled `title`, once `key` was saved as
    /// `value` (as a script, another desktop or an import may set it).
    @MainActor private func editDialog(_ dataset: String = "worldcup", on title: String, after key: String, isSavedAs value: Any?) throws
        -> (window: ViewerWindow, object: ManagedObject, dialog: ObjectDialog) {
        let window = try openWindow(dataset)
        let session = try XCTUnwrap(window.session)
        let object = try XCTUnwrap(window.object(titled: title))
        try object.setValue(value, forKey: key)
        try session.context.save()
        session.selection.select(object)
        window.showEditDialog()
        return (window, object, try XCTUnwrap(window.dialog))
    }

    /// Over a 360 px window, the Add and Edit dialogs of every dataset fit: no wider than the
    /// window, whatever their fields (#24 item 9).
    func testTheAddAndEditDialogsFitA360PixelWindow() throws { try MainActor.assumeIsolated {
        for dataset in ["worldcup", "movies", "todo", "failedbanks"] {
            let window = try openWindow(dataset)
            gtk_window_set_default_size(window.window.cast(), 360, 640)
            XCTAssertTrue(MainLoop.iterate(until: { gtk_widget_get_width(window.window) < 400 }), "the window is narrow")
            window.session?.selection.select(window.session.flatMap { $0.object(atPosition: 1) })
            for open in [window.showAddDialog, window.showEditDialog] {
                open()
                let dialog = try XCTUnwrap(window.dialog, dataset)
                MainLoop.iterate(for: 0.2)
                let title = String(cString: gtk_window_get_title(dialog.window.cast()))
                var minimum: Int32 = 0
                gtk_widget_measure(dialog.window, GTK_ORIENTATION_HORIZONTAL, -1, &minimum, nil, nil, nil)
                XCTAssertLessThanOrEqual(minimum, 360, "\(title) can be as narrow as the window")
                XCTAssertLessThanOrEqual(gtk_widget_get_width(dialog.window), gtk_widget_get_width(window.window), "\(title) is no wider than the window")
                if let folder = ProcessInfo.processInfo.environment["VIEWER_SCREENSHOTS"] {
                    try Screenshot.save(dialog.window, to: URL(fileURLWithPath: "\(folder)/\(title.replacingOccurrences(of: " ", with: "-"))-360.png"))
                }
                gtk_window_destroy(dialog.window.cast())
                MainLoop.iterate(for: 0.05)
            }
        }
    } }

    func testAddingATeamInANewZoneMakesANewSectionAndSelectsIt() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        window.showAddDialog()
        let dialog = try XCTUnwrap(window.dialog)
        MainLoop.iterate(for: 0.1)
        XCTAssertEqual(String(cString: gtk_window_get_title(dialog.window.cast())), "Add Team")
        XCTAssertEqual(dialog.editors.map(\.title), ["Team name", "Qualifying zone"])
        type("Atlantis", into: dialog.editors[0])
        type("Oceania", into: dialog.editors[1])
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertFalse(dialog.isOpen, "the dialog closes once saved")
        XCTAssertEqual(window.listLines.filter { $0.hasPrefix("[") },
                       ["[Africa]", "[Asia]", "[Europe]", "[North/Central America]", "[Oceania]", "[South America]"])
        XCTAssertEqual(window.rows(inSection: "Oceania"), ["> Atlantis · Wins: 0"])
        let atlantis = try XCTUnwrap(window.session?.selection.selectedObject)
        XCTAssertTrue(MainLoop.iterate(until: {
            window.factory?.rowWidget(showing: atlantis.objectID).map(window.isFullyOnScreen) == true
                && window.factory?.headerWidget(named: "Oceania").map(window.isFullyOnScreen) == true
        }), "the new team and its new section's header are in view")

        window.undo()
        MainLoop.iterate(for: 0.1)
        XCTAssertFalse(window.listLines.contains("[Oceania]"), "Undo removes the team and its section")
    } }

    func testARefusedSaveKeepsTheDialogOpenWithTheMessageAndWhatWasTyped() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        window.showAddDialog()
        let dialog = try XCTUnwrap(window.dialog)
        type("Oceania", into: dialog.editors[1])
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertTrue(dialog.isOpen)
        XCTAssertTrue(dialog.message.isVisible)
        XCTAssertEqual(labelText(dialog.message), "Team name must not be empty.")
        XCTAssertEqual(dialog.editors[1].text, "Oceania")
        XCTAssertEqual(window.listLines.count, 37, "nothing was added")
        XCTAssertFalse(window.session!.context.hasChanges)

        type("Atlantis", into: dialog.editors[0])
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertFalse(dialog.isOpen, "fixed, it saves")
    } }

    func testEditingRenamesTheSelectedTeamAndUndoRestoresIt() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let session = try XCTUnwrap(window.session)
        session.selection.select(window.object(titled: "Ghana"))
        window.showEditDialog()
        let dialog = try XCTUnwrap(window.dialog)
        XCTAssertEqual(dialog.editors.map(\.title), ["Team name", "Qualifying zone", "Wins"])
        XCTAssertEqual(String(cString: gtk_editable_get_text(OpaquePointer(dialog.editors[0].widget))), "Ghana")
        type("Black Stars", into: dialog.editors[0])
        dialog.editors[2].text = "4"
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertEqual(window.rows(inSection: "Africa").first, "> Black Stars · Wins: 4")
        XCTAssertEqual(window.detailLines.first, "Black Stars")

        window.undo()
        MainLoop.iterate(for: 0.1)
        XCTAssertTrue(window.rows(inSection: "Africa").contains("> Ghana · Wins: 0"), "\(window.rows(inSection: "Africa"))")
    } }

    /// A team with more wins than any field range would allow (set by a script, another
    /// desktop, an import) shows them as stored, and renaming it writes the name only.
    func testEditingOnlyTheNameKeepsAValueNoFieldWouldOffer() throws { try MainActor.assumeIsolated {
        let (window, ghana, dialog) = try editDialog(on: "Ghana", after: "wins", isSavedAs: 5_000)
        XCTAssertEqual(dialog.editors[2].text, "5000", "the dialog shows what is stored")
        type("Black Stars", into: dialog.editors[0])
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertFalse(dialog.isOpen, labelText(dialog.message))
        XCTAssertEqual(ghana.attributeValue(forKey: "wins"), .integer(5_000), "the wins nobody touched stay")
        XCTAssertEqual(ghana.attributeValue(forKey: "teamName"), .string("Black Stars"))

        // Opened and saved with nothing changed: nothing is written, and there is no Undo that does nothing.
        window.showEditDialog()
        let unchanged = try XCTUnwrap(window.dialog)
        unchanged.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertFalse(unchanged.isOpen)
        window.undo()
        MainLoop.iterate(for: 0.1)
        XCTAssertEqual(ghana.attributeValue(forKey: "teamName"), .string("Ghana"), "Undo undoes the rename, the last edit")
        XCTAssertEqual(ghana.attributeValue(forKey: "wins"), .integer(5_000))
    } }

    /// A movie with no year keeps none when its title is edited (the field once showed, and
    /// saved, its lowest year), and an empty year saves none.
    func testAMovieWithoutAYearKeepsNoYear() throws { try MainActor.assumeIsolated {
        let (_, amelie, dialog) = try editDialog("movies", on: "Amélie", after: "year", isSavedAs: nil)
        let year = try XCTUnwrap(dialog.editors.first { $0.field.key == "year" })
        XCTAssertEqual(year.text, "", "no year shows as none")
        type("Le Fabuleux Destin d’Amélie Poulain", into: dialog.editors[0])
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertFalse(dialog.isOpen, labelText(dialog.message))
        XCTAssertEqual(amelie.attributeValue(forKey: "year"), .null)
    } }

    /// Typed numbers out of range, or not numbers, are refused with the field's label and
    /// the rule, the field highlighted; nothing is clamped, saved or lost of what was typed.
    func testANumberOutOfRangeIsRefusedWithAMessageNeverClamped() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let session = try XCTUnwrap(window.session)
        let ghana = try XCTUnwrap(window.object(titled: "Ghana"))
        session.selection.select(ghana)
        window.showEditDialog()
        let dialog = try XCTUnwrap(window.dialog)
        let wins = dialog.editors[2]
        for (typed, message) in [("-1", "Wins must be at least 0 (is -1)."),
                                 ("99999999999999999999", "Wins must be at most 9223372036854775807 (is 99999999999999999999)."),
                                 ("-99999999999999999999", "Wins must be at least -9223372036854775808 (is -99999999999999999999)."),
                                 ("12.5", "Wins must be a whole number (is 12.5)."),
                                 ("5.0", "Wins must be a whole number (is 5.0)."),
                                 ("lots", "Wins must be a whole number (is lots).")] {
            type(typed, into: wins)
            dialog.save()
            MainLoop.iterate(for: 0.05)
            XCTAssertTrue(dialog.isOpen, typed)
            XCTAssertEqual(labelText(dialog.message), message)
            XCTAssertEqual(wins.text, typed, "what was typed stays to be corrected")
            XCTAssertTrue(gtk_widget_has_css_class(wins.widget, "error") != 0, "\(typed): the field is highlighted")
            XCTAssertEqual(ghana.attributeValue(forKey: "wins"), .integer(0), "\(typed): nothing saved")
            XCTAssertFalse(session.context.hasChanges)
        }
        type("1000000", into: wins)
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertFalse(dialog.isOpen, "a million wins is a number like any other: \(labelText(dialog.message))")
        XCTAssertEqual(ghana.attributeValue(forKey: "wins"), .integer(1_000_000))
    } }

    /// A field's own `min`/`max` (a movie's year from 1888 to 2100) refuses a typed value
    /// outside them, and never touches a stored one it does not like.
    func testAFieldsOwnRangeRefusesTypedValuesOnly() throws { try MainActor.assumeIsolated {
        let (window, amelie, first) = try editDialog("movies", on: "Amélie", after: "year", isSavedAs: 2_500)
        var dialog = first
        var year = try XCTUnwrap(dialog.editors.first { $0.field.key == "year" })
        XCTAssertEqual(year.text, "2500")
        type("Amélie Poulain", into: dialog.editors[0])
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertFalse(dialog.isOpen, labelText(dialog.message))
        XCTAssertEqual(amelie.attributeValue(forKey: "year"), .integer(2_500), "untouched, kept")

        window.showEditDialog()
        dialog = try XCTUnwrap(window.dialog)
        year = try XCTUnwrap(dialog.editors.first { $0.field.key == "year" })
        type("3000", into: year)
        dialog.save()
        MainLoop.iterate(for: 0.05)
        XCTAssertEqual(labelText(dialog.message), "Year must be from 1888 to 2100 (is 3000).")
        XCTAssertEqual(amelie.attributeValue(forKey: "year"), .integer(2_500))
        type("2001", into: year)
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertFalse(dialog.isOpen, labelText(dialog.message))
        XCTAssertEqual(amelie.attributeValue(forKey: "year"), .integer(2_001))
    } }

    func testEnterOnTheSelectedRowOpensTheEditDialogWithItsValuesAndAddsNoWin() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let session = try XCTUnwrap(window.session)
        session.selection.select(window.object(titled: "Ghana"))
        let ghana = try XCTUnwrap(window.object(titled: "Ghana"))
        let row = try XCTUnwrap(window.factory?.rowWidget(showing: ghana.objectID))
        gtk_widget_grab_focus(row)
        let controller = try XCTUnwrap(window.enterController)
        XCTAssertTrue(pressKey(GDK_KEY_Return, on: controller), "the list's capture controller takes Enter")
        MainLoop.iterate(for: 0.1)
        let dialog = try XCTUnwrap(window.dialog, "Enter opens a dialog")
        XCTAssertTrue(dialog.isOpen)
        XCTAssertEqual(String(cString: gtk_window_get_title(dialog.window.cast())), "Edit Team")
        XCTAssertEqual(String(cString: gtk_editable_get_text(OpaquePointer(dialog.editors[0].widget))), "Ghana")
        XCTAssertEqual(dialog.editors[1].text, "Africa")
        XCTAssertEqual(dialog.editors[2].text, "0")
        XCTAssertTrue(window.rows(inSection: "Africa").contains("> Ghana · Wins: 0"), "Enter adds no win: \(window.rows(inSection: "Africa"))")

        // Escape cancels the dialog; keypad Enter edits too; Ctrl+Enter and other keys go on to GTK.
        XCTAssertTrue(pressKey(GDK_KEY_Escape, on: dialog.keyController))
        MainLoop.iterate(for: 0.1)
        XCTAssertFalse(dialog.isOpen)
        gtk_widget_grab_focus(try XCTUnwrap(window.factory?.rowWidget(showing: ghana.objectID)))
        XCTAssertTrue(pressKey(GDK_KEY_KP_Enter, on: controller))
        MainLoop.iterate(for: 0.1)
        XCTAssertTrue(window.dialog?.isOpen == true && window.dialog !== dialog, "keypad Enter opens Edit")
        window.dialog.map { gtk_window_destroy($0.window.cast()) }
        XCTAssertFalse(pressKey(GDK_KEY_Return, modifiers: GDK_CONTROL_MASK, on: controller))
        XCTAssertFalse(pressKey(GDK_KEY_Down, on: controller))
    } }

    func testTheDatePickerSetsAndClearsAMoviesLentDate() throws { try MainActor.assumeIsolated {
        let window = try openWindow("movies")
        let session = try XCTUnwrap(window.session)
        let amelie = try XCTUnwrap(window.object(titled: "Amélie"))
        session.selection.select(amelie)
        window.showEditDialog()
        var dialog = try XCTUnwrap(window.dialog)
        var editor = try XCTUnwrap(dialog.editors.first { $0.field.key == "lentDate" })
        XCTAssertTrue(editor.widget.isA(gtk_menu_button_get_type()), "a button with a calendar popover")
        XCTAssertEqual(labelText(try XCTUnwrap(editor.dateLabel)), "2026-11-07")
        var calendar = try XCTUnwrap(editor.calendar)
        let shown = gtk_calendar_get_date(calendar.opaque)!
        XCTAssertEqual([g_date_time_get_year(shown), g_date_time_get_month(shown), g_date_time_get_day_of_month(shown)], [2026, 11, 7])
        g_date_time_unref(shown)

        // A person opens the popover and picks Christmas Eve in the calendar.
        gtk_menu_button_popup(editor.widget.opaque)
        MainLoop.iterate(for: 0.3)
        XCTAssertEqual(gtk_widget_get_mapped(calendar), 1, "the calendar shows")
        if let folder = ProcessInfo.processInfo.environment["VIEWER_SCREENSHOTS"] {
            _ = try? Process.run(URL(fileURLWithPath: "/usr/bin/import"), arguments: ["-window", "root", folder + "/date-picker.png"]).waitUntilExit()
        }
        let christmasEve = g_date_time_new_local(2026, 12, 24, 12, 0, 0)!
        gtk_calendar_select_day(calendar.opaque, christmasEve)
        g_date_time_unref(christmasEve)
        XCTAssertEqual(labelText(try XCTUnwrap(editor.dateLabel)), "2026-12-24", "the button shows the picked day")
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertFalse(dialog.isOpen)
        XCTAssertEqual(amelie.attributeValue(forKey: "lentDate"), .date(try XCTUnwrap(ISO8601DateFormatter().date(from: "2026-12-24T00:00:00Z"))))
        XCTAssertTrue(window.detailLines.contains("2026-12-24"), "\(window.detailLines)")

        // Clear: no date.
        window.showEditDialog()
        dialog = try XCTUnwrap(window.dialog)
        editor = try XCTUnwrap(dialog.editors.first { $0.field.key == "lentDate" })
        calendar = try XCTUnwrap(editor.calendar)
        XCTAssertEqual(labelText(try XCTUnwrap(editor.dateLabel)), "2026-12-24")
        gtk_menu_button_popup(editor.widget.opaque)
        MainLoop.iterate(for: 0.2)
        gtk_widget_activate(try XCTUnwrap(editor.clearButton))  // a button clicks once its press animation ends
        XCTAssertTrue(MainLoop.iterate(until: { labelText(editor.dateLabel!) == "Not set" }))
        XCTAssertEqual(gtk_widget_get_mapped(calendar), 0, "Clear closes the popover")
        XCTAssertEqual(labelText(try XCTUnwrap(editor.dateLabel)), "Not set")
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertFalse(dialog.isOpen)
        XCTAssertEqual(amelie.attributeValue(forKey: "lentDate"), .null)
        XCTAssertFalse(window.detailLines.contains("2026-12-24"))

        window.undo()
        MainLoop.iterate(for: 0.1)
        XCTAssertEqual(amelie.attributeValue(forKey: "lentDate"), .date(try XCTUnwrap(ISO8601DateFormatter().date(from: "2026-12-24T00:00:00Z"))))
    } }

    func testAToDoItemNeedsANameAndIsAddedToTheSelectedList() throws { try MainActor.assumeIsolated {
        let window = try openWindow("todo")
        let session = try XCTUnwrap(window.session)
        let selected = try XCTUnwrap(session.selection.selectedObject)
        let list = try XCTUnwrap(selected.relatedObjects(forKey: "list").first as? ManagedObject)
        let title = ViewConfiguration.text(of: list, keyPath: "title")
        let before = window.rows(inSection: title).count
        window.showAddDialog()
        let dialog = try XCTUnwrap(window.dialog)
        dialog.save()
        XCTAssertEqual(labelText(dialog.message), "Name must not be empty.")
        type("Water the plants", into: dialog.editors[0])
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertEqual(window.rows(inSection: title).count, before + 1)
        XCTAssertTrue(window.rows(inSection: title).contains("> [ ] Water the plants"), "\(window.rows(inSection: title))")
    } }

    func testDeletingAndUndoingAFailedBankBringsBackItsDetails() throws { try MainActor.assumeIsolated {
        let window = try openWindow("failedbanks")
        let first = try XCTUnwrap(window.listLines.first)
        let detailBefore = window.detailLines
        window.deleteSelection()
        MainLoop.iterate(for: 0.1)
        XCTAssertEqual(window.listLines.count, 533)
        XCTAssertTrue(window.listLines[0].hasPrefix(">"), "the next bank is selected")
        XCTAssertTrue(window.shownToast?.hasSuffix("” deleted") == true, "a toast with Undo: \(window.shownToast ?? "none")")

        window.undo()
        MainLoop.iterate(for: 0.1)
        XCTAssertEqual(window.listLines.count, 534)
        XCTAssertFalse(window.banner.isVisible, labelText(window.banner))
        XCTAssertEqual(window.listLines[0], first, "back in its place, selected")
        XCTAssertEqual(window.detailLines, detailBefore, "with its details (deleted with it, inserted again)")
    } }

    func testUndoTakesBackATap() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        window.activateRow(titled: "Nigeria")
        XCTAssertEqual(window.rows(inSection: "Africa").first, "> Nigeria · Wins: 1")
        window.undo()
        MainLoop.iterate(for: 0.1)
        XCTAssertEqual(window.rows(inSection: "Africa").last, "> Nigeria · Wins: 0")
        XCTAssertEqual(gtk_widget_get_sensitive(window.undoButton), 0, "nothing left to undo")
    } }

    /// A team tapped, then deleted: the first Undo brings it back with its win (under a new
    /// ID), and the second takes the win back from the team brought back, without an error.
    func testUndoingADeleteThenATapFindsTheTeamBroughtBack() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        window.activateRow(titled: "Nigeria")
        XCTAssertEqual(window.rows(inSection: "Africa").first, "> Nigeria · Wins: 1")
        window.deleteSelection()
        MainLoop.iterate(for: 0.1)
        XCTAssertFalse(window.listLines.contains { $0.contains("Nigeria") })
        window.undo()
        MainLoop.iterate(for: 0.1)
        XCTAssertEqual(window.rows(inSection: "Africa").first, "> Nigeria · Wins: 1", "back with its win")
        window.undo()
        MainLoop.iterate(for: 0.1)
        XCTAssertFalse(window.banner.isVisible, labelText(window.banner))
        XCTAssertEqual(window.rows(inSection: "Africa").last?.dropFirst(2), "Nigeria · Wins: 0", window.listLines.joined(separator: "\n"))
        XCTAssertEqual(gtk_widget_get_sensitive(window.undoButton), 0, "nothing left to undo")
    } }
}
