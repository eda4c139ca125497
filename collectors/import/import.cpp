#include "collectors/import/import.h"
