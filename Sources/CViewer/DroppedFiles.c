#include "CViewer.h"

typedef struct {
  FrDroppedFileFunc dropped;
  gpointer data;
  GDestroyNotify destroy;
} FrDropped;

static void
free_dropped (gpointer data, GClosure *closure)
{
  (void) closure;
  FrDropped *self = data;
  if (self->destroy)
    self->destroy (self->data);
  g_free (self);
}

static gboolean
on_drop (GtkDropTarget *target, const GValue *value, double x, double y, FrDropped *self)
{
  (void) target;
  (void) x;
  (void) y;
  if (!G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    return FALSE;
  GSList *files = gdk_file_list_get_files (g_value_get_boxed (value));
  gboolean taken = FALSE;
  for (GSList *l = files; l != NULL && !taken; l = l->next)
    {
      char *path = g_file_get_path (l->data);
      if (path != NULL)
        {
          taken = self->dropped (path, self->data);
          g_free (path);
        }
    }
  g_slist_free (files);
  return taken;
}

GtkEventController *
fr_widget_accept_dropped_files (GtkWidget *widget, FrDroppedFileFunc dropped, gpointer data, GDestroyNotify destroy)
{
  GtkDropTarget *target = gtk_drop_target_new (GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  FrDropped *self = g_new0 (FrDropped, 1);
  self->dropped = dropped;
  self->data = data;
  self->destroy = destroy;
  g_signal_connect_data (target, "drop", G_CALLBACK (on_drop), self, free_dropped, 0);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (target));
  return GTK_EVENT_CONTROLLER (target);
}

gboolean
fr_drop_target_drop_file (GtkEventController *target, const char *path)
{
  GFile *file = g_file_new_for_path (path);
  GSList *files = g_slist_append (NULL, file);
  GValue value = G_VALUE_INIT;
  g_value_init (&value, GDK_TYPE_FILE_LIST);
  g_value_take_boxed (&value, gdk_file_list_new_from_list (files));
  g_slist_free (files);
  g_object_unref (file);
  gboolean taken = FALSE;
  g_signal_emit_by_name (target, "drop", &value, 10.0, 10.0, &taken);
  g_value_unset (&value);
  return taken;
}
