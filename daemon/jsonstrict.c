/*
 * jsonstrict.c - see jsonstrict.h.
 */
#include "jsonstrict.h"

#include <math.h>
#include <string.h>

#include "errmsg.h"

int jsonstrict_check_keys(const char *origin, const char *prefix, const cJSON *obj,
                          const char *const *known, char *err, size_t errlen)
{
	for (const cJSON *a = obj->child; a; a = a->next)
		for (const cJSON *b = a->next; b; b = b->next)
			if (!strcmp(a->string, b->string)) {
				errmsg_set(err, errlen, "%s: key '%s%s' appears more than once", origin, prefix,
				           a->string);
				return -1;
			}
	for (const cJSON *m = obj->child; m; m = m->next) {
		size_t i;

		for (i = 0; known[i]; i++)
			if (!strcmp(m->string, known[i]))
				break;
		if (!known[i]) {
			errmsg_set(err, errlen, "%s: key '%s%s' is unknown", origin, prefix, m->string);
			return -1;
		}
	}
	return 0;
}

int jsonstrict_get_uint(const char *origin, const char *key, const cJSON *v, uint64_t lo, uint64_t hi,
                        uint64_t *out, char *err, size_t errlen)
{
	double d;

	if (!cJSON_IsNumber(v)) {
		errmsg_set(err, errlen, "%s: key '%s' must be a number", origin, key);
		return -1;
	}
	d = v->valuedouble;
	if (!isfinite(d) || d != floor(d) || d < (double)lo || d > (double)hi) {
		errmsg_set(err, errlen, "%s: key '%s' must be a whole number from %llu to %llu", origin, key,
		           (unsigned long long)lo, (unsigned long long)hi);
		return -1;
	}
	*out = (uint64_t)d;
	return 0;
}
