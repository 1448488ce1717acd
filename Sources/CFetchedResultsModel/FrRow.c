#include "CFetchedResultsModel.h"

struct _FrRow {
  GObject parent_instance;
  FrRowKind kind;
  gint64 row_key;
  char *name;
  guint revision;
};

G_DEFINE_FINAL_TYPE (FrRow, fr_row, G_TYPE_OBJECT)

enum { PROP_KIND = 1, PROP_ROW_KEY, PROP_NAME, N_PROPS };
static GParamSpec *properties[N_PROPS];

static void
fr_row_finalize (GObject *object)
{
  g_free (FR_ROW (object)->name);
  G_OBJECT_CLASS (fr_row_parent_class)->finalize (object);
}

// Read-only properties, so that GtkExpression and GtkBuilder list item templates can use them.
static void
fr_row_get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  FrRow *self = FR_ROW (object);
  switch (id)
    {
    case PROP_KIND: g_value_set_int (value, self->kind); break;
    case PROP_ROW_KEY: g_value_set_int64 (value, self->row_key); break;
    case PROP_NAME: g_value_set_string (value, self->name); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    }
}

static void
fr_row_class_init (FrRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->finalize = fr_row_finalize;
  object_class->get_property = fr_row_get_property;
  properties[PROP_KIND] = g_param_spec_int ("kind", NULL, NULL, FR_ROW_KIND_HEADER, FR_ROW_KIND_OBJECT,
                                            FR_ROW_KIND_OBJECT, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_ROW_KEY] = g_param_spec_int64 ("row-key", NULL, NULL, G_MININT64, G_MAXINT64, 0,
                                                 G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_NAME] = g_param_spec_string ("name", NULL, NULL, NULL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
fr_row_init (FrRow *self)
{
  self->kind = FR_ROW_KIND_OBJECT;
}

FrRow *
fr_row_new_header (const char *name)
{
  FrRow *self = g_object_new (FR_TYPE_ROW, NULL);
  self->kind = FR_ROW_KIND_HEADER;
  self->name = g_strdup (name);
  return self;
}

FrRow *
fr_row_new_object (gint64 row_key)
{
  FrRow *self = g_object_new (FR_TYPE_ROW, NULL);
  self->row_key = row_key;
  return self;
}

static void
fr_row_set (FrRow *self, FrRowKind kind, gint64 row_key, const char *name)
{
  g_return_if_fail (FR_IS_ROW (self));
  gboolean kind_changed = self->kind != kind;
  gboolean key_changed = self->row_key != row_key;
  gboolean name_changed = g_strcmp0 (self->name, name) != 0;
  self->revision++;
  if (!kind_changed && !key_changed && !name_changed)
    return;
  g_object_freeze_notify (G_OBJECT (self));
  self->kind = kind;
  self->row_key = row_key;
  if (name_changed)
    {
      g_free (self->name);
      self->name = g_strdup (name);
    }
  if (kind_changed) g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_KIND]);
  if (key_changed) g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ROW_KEY]);
  if (name_changed) g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_NAME]);
  g_object_thaw_notify (G_OBJECT (self));
}

void
fr_row_set_header (FrRow *self, const char *name)
{
  fr_row_set (self, FR_ROW_KIND_HEADER, 0, name);
}

void
fr_row_set_object (FrRow *self, gint64 row_key)
{
  fr_row_set (self, FR_ROW_KIND_OBJECT, row_key, NULL);
}

guint
fr_row_get_revision (FrRow *self)
{
  g_return_val_if_fail (FR_IS_ROW (self), 0);
  return self->revision;
}

FrRowKind
fr_row_get_kind (FrRow *self)
{
  g_return_val_if_fail (FR_IS_ROW (self), FR_ROW_KIND_OBJECT);
  return self->kind;
}

gint64
fr_row_get_row_key (FrRow *self)
{
  g_return_val_if_fail (FR_IS_ROW (self), 0);
  return self->row_key;
}

const char *
fr_row_get_name (FrRow *self)
{
  g_return_val_if_fail (FR_IS_ROW (self), NULL);
  return self->name;
}

FrRow *
fr_row_from_item (gpointer item)
{
  return FR_IS_ROW (item) ? FR_ROW (item) : NULL;
}
