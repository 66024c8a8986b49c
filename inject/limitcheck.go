package inject

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// limitRangeViolations is what the LimitRange plugin's check of a Pod
// says, one text per violation.
func limitRangeViolations(pod *corev1.Pod, ranges []corev1.LimitRange) []string {
	var out []string
	check := func(lr *corev1.LimitRange, item *corev1.LimitRangeItem, what string, req, lim corev1.ResourceList) {
		for _, rule := range []struct {
			bounds corev1.ResourceList
			check  func(corev1.ResourceName, resource.Quantity) string
		}{
			{item.Min, func(n corev1.ResourceName, q resource.Quantity) string {
				return boundViolation(item.Type, n, q, false, req, lim)
			}},
			{item.Max, func(n corev1.ResourceName, q resource.Quantity) string {
				return boundViolation(item.Type, n, q, true, req, lim)
			}},
			{item.MaxLimitRequestRatio, func(n corev1.ResourceName, q resource.Quantity) string {
				return ratioViolation(item.Type, n, q, req, lim)
			}},
		} {
			for _, name := range slices.Sorted(maps.Keys(rule.bounds)) {
				if e := rule.check(name, rule.bounds[name]); e != "" {
					out = append(out, fmt.Sprintf("LimitRange %s, %s: %s", lr.Name, what, e))
				}
			}
		}
	}
	for i := range ranges {
		lr := &ranges[i]
		for j := range lr.Spec.Limits {
			item := &lr.Spec.Limits[j]
			switch item.Type {
			case corev1.LimitTypeContainer:
				for _, c := range append(slices.Clip(pod.Spec.InitContainers), pod.Spec.Containers...) {
					check(lr, item, "container "+c.Name, c.Resources.Requests, c.Resources.Limits)
				}
			case corev1.LimitTypePod:
				check(lr, item, "the Pod", resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}),
					resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{}))
			}
		}
	}
	return out
}

// values compares in milli-units where none overflows, as the plugin does.
func values(req, lim, enforced resource.Quantity) (int64, int64, int64) {
	r, l, e := req.Value(), lim.Value(), enforced.Value()
	if r <= resource.MaxMilliValue && l <= resource.MaxMilliValue && e <= resource.MaxMilliValue {
		return req.MilliValue(), lim.MilliValue(), enforced.MilliValue()
	}
	return r, l, e
}

// boundViolation is the plugin's check of a min (atMost false) or a max
// (atMost true): the side the bound requires (a request for a min, a
// limit for a max) is there, and both sides are within the bound.
func boundViolation(kind corev1.LimitType, name corev1.ResourceName, bound resource.Quantity, atMost bool, request, limit corev1.ResourceList) string {
	word, needed, neededName, other, otherName := "minimum", request, "request", limit, "limit"
	if atMost {
		word, needed, neededName, other, otherName = "maximum", limit, "limit", request, "request"
	}
	q, has := needed[name]
	o, hasOther := other[name]
	x, y, e := values(q, o, bound)
	beyond := func(v int64) bool { return atMost && v > e || !atMost && v < e }
	switch {
	case !has:
		return fmt.Sprintf("%s %s usage per %s is %s, and no %s is specified", word, name, kind, bound.String(), neededName)
	case beyond(x):
		return fmt.Sprintf("%s %s usage per %s is %s, but %s is %s", word, name, kind, bound.String(), neededName, q.String())
	case hasOther && beyond(y):
		return fmt.Sprintf("%s %s usage per %s is %s, but %s is %s", word, name, kind, bound.String(), otherName, o.String())
	}
	return ""
}

func ratioViolation(kind corev1.LimitType, name corev1.ResourceName, ratio resource.Quantity, request, limit corev1.ResourceList) string {
	req, hasReq := request[name]
	lim, hasLim := limit[name]
	r, l, _ := values(req, lim, ratio)
	switch {
	case !hasReq || r == 0:
		return fmt.Sprintf("%s max limit to request ratio per %s is %s, but no request is specified or request is 0", name, kind, ratio.String())
	case !hasLim || l == 0:
		return fmt.Sprintf("%s max limit to request ratio per %s is %s, but no limit is specified or limit is 0", name, kind, ratio.String())
	}
	observed := float64(l) / float64(r)
	max := float64(ratio.Value())
	if ratio.Value() <= resource.MaxMilliValue {
		observed *= 1000
		max = float64(ratio.MilliValue())
	}
	if observed > max {
		return fmt.Sprintf("%s max limit to request ratio per %s is %s, but provided ratio is %f", name, kind, ratio.String(), float64(l)/float64(r))
	}
	return ""
}
