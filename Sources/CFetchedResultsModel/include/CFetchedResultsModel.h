// The C half of GtkBinding: what Swift cannot express. A GObject type implementing the
// GListModel interface whose content lives in Swift, the item type it hands out, cast
// helpers for GObject macros that do not import into Swift, and libdispatch's main-queue hook.
#pragma once

#include <gio/gio.h>
#include <glib-unix.h>

G_BEGIN_DECLS

// MARK: FrRow, the items

/// What a row of the flattened list shows.
typedef enum {
  FR_ROW_KIND_HEADER,  ///< A section header; `name` is the section's name.
  FR_ROW_KIND_OBJECT,  ///< An object; `row-key` is its ObjectID's row key.
} FrRowKind;

#define FR_TYPE_ROW (fr_row_get_type ())
G_DECLARE_FINAL_TYPE (FrRow, fr_row, FR, ROW, GObject)

/// A new header row (full reference) for the section named `name` (copied).
FrRow *fr_row_new_header (const char *name);
/// A new object row (full reference) for the object whose ObjectID has `row_key`.
FrRow *fr_row_new_object (gint64 row_key);

FrRowKind fr_row_get_kind (FrRow *self);
/// The object's row key; 0 for a header.
gint64 fr_row_get_row_key (FrRow *self);
/// The section's name; NULL for an object row.
const char *fr_row_get_name (FrRow *self);

/// Makes `self` a header row for the section named `name` (copied), notifying the properties
/// that change, and counts a revision. A reload keeps the rows GTK holds and gives them
/// their new contents this way, then announces them replaced by themselves (GTK keeps their
/// row widgets and binds them again).
void fr_row_set_header (FrRow *self, const char *name);
/// Makes `self` an object row for `row_key`, notifying the properties that change, and
/// counts a revision.
void fr_row_set_object (FrRow *self, gint64 row_key);
/// How many times the row was given contents after it was made: the same row with a new
/// revision may show another object, or the same one with other values.
guint fr_row_get_revision (FrRow *self);

/// `item` as a row, or NULL when it is not one (a checked G_TYPE_CHECK_INSTANCE_CAST).
FrRow *fr_row_from_item (gpointer item);

// MARK: FrListModel, the list

/// The number of items; called by g_list_model_get_n_items.
typedef guint (*FrListModelCountFunc) (gpointer user_data);
/// A new reference to the item at `position`, or NULL past the end; called by
/// g_list_model_get_item only for the positions a consumer asks for.
typedef FrRow *(*FrListModelItemFunc) (guint position, gpointer user_data);

#define FR_TYPE_LIST_MODEL (fr_list_model_get_type ())
G_DECLARE_FINAL_TYPE (FrListModel, fr_list_model, FR, LIST_MODEL, GObject)

/// A list model of FrRow items whose count and items come from `count` and `item`, called
/// with `user_data`; `destroy` (may be NULL) is called on `user_data` when the model is
/// finalized. Returns a full reference, as the GListModel it implements. The owner of
/// `user_data` announces every change with g_list_model_items_changed.
GListModel *fr_list_model_new (FrListModelCountFunc count, FrListModelItemFunc item,
                               gpointer user_data, GDestroyNotify destroy);

// MARK: Clicks on rows that moved under a still pointer

/// Adds a click gesture (capture phase, primary button) to `list_widget` (a GtkWidget *,
/// usually a GtkListView) that gives each press to the widget under the pointer, where
/// GTK 4.8 would give it to a stale one: a button or check button inside a row is activated
/// when pressed; a row is selected, and activated on a double-click. Returns the gesture
/// (owned by the widget).
gpointer fr_list_retarget_clicks (gpointer list_widget);

// MARK: Casts (the G_OBJECT macro)

/// `instance` as a GObject (unchecked: any GObject-derived instance).
GObject *fr_cast_object (gpointer instance);

// MARK: The Dispatch main queue in a GLib main loop

/// The file descriptor (an eventfd) that becomes readable when work is queued on the Dispatch
/// main queue: libdispatch's run-loop hook (`_dispatch_get_main_queue_handle_4CF`, the one
/// CoreFoundation's run loop uses), which Dispatch's public headers do not declare.
int fr_main_queue_handle (void);

/// Clears the handle's wake-up and runs the work queued on the main queue
/// (`_dispatch_main_queue_callback_4CF`). Call on the main thread only.
void fr_main_queue_drain (void);

G_END_DECLS
