/* c_api_test's C half: C passes any int as an enum, which C++ may not even load (UBSan
 * reports an out-of-range ember_status in C++ code), so unknown statuses come from here. */
#include "ember/ember.h"

const char* ember_test_status_string_of(int value) {
  return ember_status_string((ember_status)value);
}
