#include "CFetchedResultsModel.h"

#include <gtk/gtk.h>

// GTK 4.8 sends a button press to the widget the pointer was last seen over (its "pointer
// focus"), which it picks again only when the pointer moves, when that widget is unmapped
// or on a release. When rows move under a still pointer (a +1 that moves its row up, a
// change saved by another process), that widget is stale: a row that moved away or the
// list itself gets the press, and the click is lost; the release picks again, so the next
// click works (every other click counted). And a button acts on its release, which may find
// another row under the pointer, moved there by the click before.
//
// A click gesture on the list, in the capture phase, sees every press first:
// - a press on a button or check button inside a row activates it at once, on the row under
//   the pointer at that moment, and is not passed on;
// - a press on a row goes to GTK when GTK has the row under its pointer focus (it marks
//   those widgets PRELIGHT); otherwise the gesture selects the row itself (Ctrl and Shift as
//   usual), and activates it on a double-click, as the row's own gesture would have;
// - a press where the list has no row yet (rows removed and added, the new ones not laid
//   out: clicks faster than frames) waits for the next frame's layout and is then given to
//   the row there.

typedef struct {
  double x, y;
  guint32 time;
  GdkModifierType state;
} FrPress;

typedef struct {
  GtkWidget *list;
  // The button a press activated, shown pressed until the release (weak pointer).
  GtkWidget *pressed;
  // The row a taken press selected, and when, so that its double-click activates it.
  GtkWidget *last_row;
  guint32 last_time;
  // Presses waiting for the next frame's layout, and the frame clock's handler then.
  GArray *waiting;
  GdkFrameClock *clock;
  gulong after_paint;
} FrListClicks;

static void
set_weak (GtkWidget **slot, GtkWidget *widget)
{
  if (*slot == widget)
    return;
  if (*slot)
    g_object_remove_weak_pointer (G_OBJECT (*slot), (gpointer *) slot);
  *slot = widget;
  if (widget)
    g_object_add_weak_pointer (G_OBJECT (widget), (gpointer *) slot);
}

/// The button or check button at `picked` or around it, inside `list`; NULL when none.
static GtkWidget *
button_around (GtkWidget *picked, GtkWidget *list)
{
  for (GtkWidget *w = picked; w != NULL && w != list; w = gtk_widget_get_parent (w))
    if (GTK_IS_BUTTON (w) || GTK_IS_CHECK_BUTTON (w))
      return w;
  return NULL;
}

/// The row (the list's child) at `picked` or around it; NULL when none.
static GtkWidget *
row_around (GtkWidget *picked, GtkWidget *list)
{
  for (GtkWidget *w = picked; w != NULL && w != list; w = gtk_widget_get_parent (w))
    if (gtk_widget_get_parent (w) == list)
      return w;
  return NULL;
}

static gboolean
within_double_click (FrListClicks *self, guint32 time)
{
  int double_click_time = 400;
  g_object_get (gtk_widget_get_settings (self->list), "gtk-double-click-time", &double_click_time, NULL);
  return time - self->last_time <= (guint32) double_click_time;
}

/// Activates `button` at once: gtk_widget_activate emits "clicked" only after showing the
/// button pressed for 250 ms, and a press meanwhile cancels it.
static void
activate_button (GtkWidget *button)
{
  if (!gtk_widget_is_sensitive (button))
    return;
  if (GTK_IS_BUTTON (button))
    g_signal_emit_by_name (button, "clicked");
  else
    gtk_widget_activate (button);
}

/// What the row's own gesture does with a press: focus and select, activate on a double-click.
static void
press_row (FrListClicks *self, GtkWidget *row, const FrPress *press)
{
  gtk_widget_grab_focus (row);
  gtk_widget_activate_action (row, "listitem.select", "(bb)",
                              (press->state & GDK_CONTROL_MASK) != 0, (press->state & GDK_SHIFT_MASK) != 0);
  if (self->last_row == row && within_double_click (self, press->time))
    {
      // GTK 4.8 has no listitem.activate: the list's activate-item at the row just selected.
      GtkSelectionModel *model = NULL;
      g_object_get (self->list, "model", &model, NULL);
      if (model != NULL)
        {
          GtkBitset *selected = gtk_selection_model_get_selection (model);
          if (!gtk_bitset_is_empty (selected))
            gtk_widget_activate_action (self->list, "list.activate-item", "u", gtk_bitset_get_minimum (selected));
          gtk_bitset_unref (selected);
          g_object_unref (model);
        }
      set_weak (&self->last_row, NULL);
      return;
    }
  set_weak (&self->last_row, row);
  self->last_time = press->time;
}

/// Gives a press that waited for the layout to the row now at its place.
static void
press_after_layout (FrListClicks *self, const FrPress *press)
{
  GtkWidget *picked = gtk_widget_pick (self->list, press->x, press->y, GTK_PICK_DEFAULT);
  GtkWidget *row = row_around (picked, self->list);
  if (row == NULL)
    return;  // the list's empty end: nothing to click
  GtkWidget *button = button_around (picked, self->list);
  if (button != NULL)
    activate_button (button);
  else
    press_row (self, row, press);
}

static void
after_paint (GdkFrameClock *clock, FrListClicks *self)
{
  g_signal_handler_disconnect (clock, self->after_paint);
  self->after_paint = 0;
  g_clear_object (&self->clock);
  GArray *waiting = self->waiting;
  self->waiting = g_array_new (FALSE, FALSE, sizeof (FrPress));
  for (guint i = 0; i < waiting->len; i++)
    press_after_layout (self, &g_array_index (waiting, FrPress, i));
  g_array_unref (waiting);
}

static void
wait_for_layout (FrListClicks *self, const FrPress *press)
{
  g_array_append_val (self->waiting, *press);
  if (self->after_paint != 0)
    return;
  GdkFrameClock *clock = gtk_widget_get_frame_clock (self->list);
  if (clock == NULL)
    return;
  self->clock = g_object_ref (clock);
  self->after_paint = g_signal_connect (clock, "after-paint", G_CALLBACK (after_paint), self);
  gtk_widget_queue_allocate (self->list);
  gdk_frame_clock_request_phase (clock, GDK_FRAME_CLOCK_PHASE_LAYOUT | GDK_FRAME_CLOCK_PHASE_AFTER_PAINT);
}

static void
pressed (GtkGestureClick *gesture, int n_press, double x, double y, FrListClicks *self)
{
  (void) n_press;
  GtkEventController *controller = GTK_EVENT_CONTROLLER (gesture);
  FrPress press = { x, y, gtk_event_controller_get_current_event_time (controller),
                    gtk_event_controller_get_current_event_state (controller) };
  GtkWidget *picked = gtk_widget_pick (self->list, x, y, GTK_PICK_DEFAULT);
  GtkWidget *row = row_around (picked, self->list);
  if (row == NULL || self->waiting->len > 0)
    {
      // No row here yet, or presses before this one wait: after the next layout, in order.
      gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
      wait_for_layout (self, &press);
      return;
    }
  GtkWidget *button = button_around (picked, self->list);
  if (button != NULL)
    {
      // A button in a row acts when pressed, on the row under the pointer at that moment:
      // on release it might be another row, moved there by the click before.
      gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
      if (!gtk_widget_is_sensitive (button))
        return;
      set_weak (&self->pressed, button);
      gtk_widget_set_state_flags (button, GTK_STATE_FLAG_ACTIVE, FALSE);
      activate_button (button);
      return;
    }
  gboolean stale = (gtk_widget_get_state_flags (picked) & GTK_STATE_FLAG_PRELIGHT) == 0;
  // The second click of a double-click whose first this gesture took: GTK's row counts one.
  gboolean second = row == self->last_row && within_double_click (self, press.time);
  if (!stale && !second)
    {
      // The press goes where the person clicked: GTK handles it.
      gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_DENIED);
      return;
    }
  gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
  press_row (self, row, &press);
}

static void
ended (FrListClicks *self)
{
  if (self->pressed != NULL)
    gtk_widget_unset_state_flags (self->pressed, GTK_STATE_FLAG_ACTIVE);
  set_weak (&self->pressed, NULL);
}

static void
released (GtkGestureClick *gesture, int n_press, double x, double y, FrListClicks *self)
{
  (void) gesture;
  (void) n_press;
  (void) x;
  (void) y;
  ended (self);
}

static void
cancelled (GtkGesture *gesture, GdkEventSequence *sequence, FrListClicks *self)
{
  (void) gesture;
  (void) sequence;
  ended (self);
}

static void
free_clicks (gpointer data, GClosure *closure)
{
  (void) closure;
  FrListClicks *self = data;
  if (self->after_paint != 0)
    g_signal_handler_disconnect (self->clock, self->after_paint);
  g_clear_object (&self->clock);
  g_array_unref (self->waiting);
  set_weak (&self->pressed, NULL);
  set_weak (&self->last_row, NULL);
  g_free (self);
}

gpointer
fr_list_retarget_clicks (gpointer list_widget)
{
  g_return_val_if_fail (GTK_IS_WIDGET (list_widget), NULL);
  GtkWidget *list = list_widget;
  FrListClicks *self = g_new0 (FrListClicks, 1);
  self->list = list;
  self->waiting = g_array_new (FALSE, FALSE, sizeof (FrPress));
  GtkGesture *gesture = gtk_gesture_click_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (gesture), GDK_BUTTON_PRIMARY);
  gtk_event_controller_set_propagation_phase (GTK_EVENT_CONTROLLER (gesture), GTK_PHASE_CAPTURE);
  gtk_event_controller_set_name (GTK_EVENT_CONTROLLER (gesture), "fr-retarget-clicks");
  g_signal_connect (gesture, "pressed", G_CALLBACK (pressed), self);
  g_signal_connect (gesture, "released", G_CALLBACK (released), self);
  g_signal_connect_data (gesture, "cancel", G_CALLBACK (cancelled), self, free_clicks, 0);
  gtk_widget_add_controller (list, GTK_EVENT_CONTROLLER (gesture));
  return GTK_EVENT_CONTROLLER (gesture);
}
