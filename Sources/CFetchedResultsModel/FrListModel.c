#include "CFetchedResultsModel.h"

// A GListModel whose content lives elsewhere (in Swift): it only forwards the interface's
// questions to two functions and owns their user data.
struct _FrListModel {
  GObject parent_instance;
  FrListModelCountFunc count;
  FrListModelItemFunc item;
  gpointer user_data;
  GDestroyNotify destroy;
};

static void fr_list_model_list_model_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (FrListModel, fr_list_model, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, fr_list_model_list_model_init))

static void
fr_list_model_finalize (GObject *object)
{
  FrListModel *self = FR_LIST_MODEL (object);
  if (self->destroy != NULL)
    self->destroy (self->user_data);
  G_OBJECT_CLASS (fr_list_model_parent_class)->finalize (object);
}

static void
fr_list_model_class_init (FrListModelClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = fr_list_model_finalize;
}

static void
fr_list_model_init (FrListModel *self)
{
}

static GType
fr_list_model_get_item_type (GListModel *list)
{
  return FR_TYPE_ROW;
}

static guint
fr_list_model_get_n_items (GListModel *list)
{
  FrListModel *self = FR_LIST_MODEL (list);
  return self->count (self->user_data);
}

static gpointer
fr_list_model_get_item (GListModel *list, guint position)
{
  FrListModel *self = FR_LIST_MODEL (list);
  return self->item (position, self->user_data);
}

static void
fr_list_model_list_model_init (GListModelInterface *iface)
{
  iface->get_item_type = fr_list_model_get_item_type;
  iface->get_n_items = fr_list_model_get_n_items;
  iface->get_item = fr_list_model_get_item;
}

GListModel *
fr_list_model_new (FrListModelCountFunc count, FrListModelItemFunc item, gpointer user_data, GDestroyNotify destroy)
{
  g_return_val_if_fail (count != NULL && item != NULL, NULL);
  FrListModel *self = g_object_new (FR_TYPE_LIST_MODEL, NULL);
  self->count = count;
  self->item = item;
  self->user_data = user_data;
  self->destroy = destroy;
  return G_LIST_MODEL (self);
}

GObject *
fr_cast_object (gpointer instance)
{
  return G_OBJECT (instance);
}
