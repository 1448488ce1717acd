// The C half of the viewer: only what Swift cannot express.
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

// MARK: Accessibility (gtk_accessible_update_property, _relation and _state are variadic)

/// Sets (NULL: removes) a text property of `widget` that assistive technologies read: its
/// name (GTK_ACCESSIBLE_PROPERTY_LABEL) or its description (as a tooltip sets it).
void fr_accessible_set_text (GtkWidget *widget, GtkAccessibleProperty property, const char *text);

/// Names `widget` by the text of `label` (GTK_ACCESSIBLE_RELATION_LABELLED_BY).
void fr_accessible_set_labelled_by (GtkWidget *widget, GtkWidget *label);

/// Hides `widget` from assistive technologies (or shows it again).
void fr_accessible_set_hidden (GtkWidget *widget, gboolean hidden);

/// Names `accessible` (a widget, or another GtkAccessible such as a GtkStackPage).
void fr_accessible_object_set_label (gpointer accessible, const char *text);

/// Sets (or clears) `GTK_ACCESSIBLE_STATE_BUSY` of `widget`: it is being updated.
void fr_accessible_set_busy (GtkWidget *widget, gboolean busy);

/// A new label with another accessible role (a heading): the role is fixed at construction,
/// which g_object_new's variadic properties give.
GtkWidget *fr_label_new_with_role (GtkAccessibleRole role);

// MARK: Dropped files

/// Called with the local path of the first file dropped on a widget; returns whether it took it.
typedef gboolean (*FrDroppedFileFunc) (const char *path, gpointer data);

/// Makes `widget` a drop target for files (a file manager's drag): `dropped` gets the first
/// local file's path. Returns the GtkDropTarget (the widget owns it), whose "drop" signal a
/// test can emit with a GdkFileList.
GtkEventController *fr_widget_accept_dropped_files (GtkWidget *widget, FrDroppedFileFunc dropped, gpointer data, GDestroyNotify destroy);

/// Drops the file at `path` on `target` (from ``fr_widget_accept_dropped_files``) as a file
/// manager's drag does: its "drop" signal with a GdkFileList. For tests; returns whether the
/// drop was taken.
gboolean fr_drop_target_drop_file (GtkEventController *target, const char *path);

// MARK: Rendering

/// Whether OpenGL on `display` is drawn by the CPU (Mesa's llvmpipe, softpipe or swrast: a
/// virtual X server such as Xvfb, a virtual machine, a remote desktop without a GPU). FALSE
/// when there is no OpenGL at all.
gboolean fr_gl_renderer_is_software (GdkDisplay *display);

G_END_DECLS
