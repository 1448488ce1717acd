#include "CViewer.h"

void
fr_accessible_set_text (GtkWidget *widget, GtkAccessibleProperty property, const char *text)
{
  if (text != NULL)
    gtk_accessible_update_property (GTK_ACCESSIBLE (widget), property, text, -1);
  else
    gtk_accessible_reset_property (GTK_ACCESSIBLE (widget), property);
}

void
fr_accessible_set_labelled_by (GtkWidget *widget, GtkWidget *label)
{
  gtk_accessible_update_relation (GTK_ACCESSIBLE (widget), GTK_ACCESSIBLE_RELATION_LABELLED_BY, label, NULL, -1);
}

void
fr_accessible_set_hidden (GtkWidget *widget, gboolean hidden)
{
  gtk_accessible_update_state (GTK_ACCESSIBLE (widget), GTK_ACCESSIBLE_STATE_HIDDEN, hidden, -1);
}

void
fr_accessible_object_set_label (gpointer accessible, const char *text)
{
  gtk_accessible_update_property (GTK_ACCESSIBLE (accessible), GTK_ACCESSIBLE_PROPERTY_LABEL, text, -1);
}

void
fr_accessible_set_busy (GtkWidget *widget, gboolean busy)
{
  gtk_accessible_update_state (GTK_ACCESSIBLE (widget), GTK_ACCESSIBLE_STATE_BUSY, busy, -1);
}

GtkWidget *
fr_label_new_with_role (GtkAccessibleRole role)
{
  return g_object_new (GTK_TYPE_LABEL, "accessible-role", role, NULL);
}
