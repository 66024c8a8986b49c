// LimitRanges: fitting the install container into them and checking the Pod as the plugin will; long because
// the fit and the check restate one admission plugin and must be read together.

package inject

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	kjson "sigs.k8s.io/json"
)

// The LimitRange admission plugin defaults and checks a Pod's containers
// before mutating webhooks are called, and checks the Pod again after
// them, without defaulting. A namespace whose LimitRange sets a min, a max
// or a maxLimitRequestRatio that the install init container's fixed
// resources do not meet would refuse every injected Pod (and a Job
// controller could create none). So both front ends, given the
// namespace's LimitRanges (the webhook watches them, the plugin reads them
// when online), give the install container what that plugin would have
// given it, move its resources into the ranges, and check the Pod as the
// plugin will (the rules of plugin/pkg/admission/limitranger, restated:
// the plugin cannot be used as a library). What the Pod's own containers
// violated before stays theirs; a violation that only the injected Pod has
// is refused.

// FitLimitRanges fits the install init container that ops (Inject's, on
// the Pod or template raw, which is before) add into the namespace's
// LimitRanges: it applies ops to raw to see the Pod as the API server
// will, fits the container, and writes the resources it was given into
// the op that adds it. An error names the LimitRange that would still
// refuse the Pod because of job-signal.
func FitLimitRanges(raw []byte, before *corev1.Pod, ops []Op, ranges []corev1.LimitRange) ([]Op, error) {
	if len(ranges) == 0 {
		return ops, nil
	}
	patched, err := Apply(raw, ops)
	if err != nil {
		return nil, err
	}
	after := &corev1.Pod{}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(patched, after); err != nil {
		return nil, err
	}
	i := slices.IndexFunc(after.Spec.InitContainers, isInstaller)
	if i >= 0 {
		fitContainer(&after.Spec.InitContainers[i].Resources, ranges)
		if lim, ok := after.Spec.InitContainers[i].Resources.Limits[corev1.ResourceMemory]; ok && lim.Cmp(minInstallMemory) < 0 {
			return nil, fmt.Errorf("the namespace's LimitRange allows containers a memory limit of at most %s, less than the %s the %s init container needs", lim.String(), minInstallMemory.String(), InitContainer)
		}
	}
	// What the Pod violated before stays its own; what only the injected
	// Pod violates is job-signal's.
	had := limitRangeViolations(before, ranges)
	added := slices.DeleteFunc(limitRangeViolations(after, ranges), func(v string) bool { return slices.Contains(had, v) })
	if len(added) > 0 {
		return nil, fmt.Errorf("with job-signal, the namespace's LimitRange would refuse the Pod: %s", strings.Join(added, "; "))
	}
	if i < 0 {
		return ops, nil
	}
	return withInstallResources(ops, resourcesValue(after.Spec.InitContainers[i].Resources)), nil
}

// withInstallResources is ops with the install container they add (alone,
// or as the list of init containers) given resources r.
func withInstallResources(ops []Op, r Fields) []Op {
	out := slices.Clone(ops)
	set := func(v any) any {
		f, ok := v.(Fields)
		if !ok || !slices.Contains(f, Field{Key: "name", Value: InitContainer}) {
			return v
		}
		f = slices.Clone(f)
		for j := range f {
			if f[j].Key == "resources" {
				f[j].Value = r
			}
		}
		return f
	}
	for i, o := range out {
		switch v := o.Value.(type) {
		case Fields:
			out[i].Value = set(v)
		case []any:
			list := slices.Clone(v)
			for j := range list {
				list[j] = set(list[j])
			}
			out[i].Value = list
		}
	}
	return out
}

// resourcesValue writes r as the layout writes resources (requests, then
// limits, resources by name), so that the plugin edits it into a manifest
// as it writes the rest.
func resourcesValue(r corev1.ResourceRequirements) Fields {
	var f Fields
	for _, side := range []struct {
		key  string
		list corev1.ResourceList
	}{{"requests", r.Requests}, {"limits", r.Limits}} {
		if len(side.list) == 0 {
			continue
		}
		var q Fields
		for _, name := range slices.Sorted(maps.Keys(side.list)) {
			v := side.list[name]
			q = append(q, Field{Key: string(name), Value: v.String()})
		}
		f = append(f, Field{Key: side.key, Value: q})
	}
	return f
}

// minInstallMemory is the least memory limit the install container may
// be given: the layout's request, what copying the binaries into their
// memory-backed volume is given anyway.
var minInstallMemory = resource.MustParse("16Mi")

// fitContainer gives r the defaults of ranges' Container limits for what
// it does not set, then moves it inside their min, max and
// maxLimitRequestRatio where it can.
func fitContainer(r *corev1.ResourceRequirements, ranges []corev1.LimitRange) {
	if r.Requests == nil {
		r.Requests = corev1.ResourceList{}
	}
	if r.Limits == nil {
		r.Limits = corev1.ResourceList{}
	}
	var items []corev1.LimitRangeItem
	for _, lr := range ranges {
		for _, item := range lr.Spec.Limits {
			if item.Type == corev1.LimitTypeContainer {
				items = append(items, item)
			}
		}
	}
	setDefaults := func(list, defaults corev1.ResourceList) {
		for name, q := range defaults {
			if _, ok := list[name]; !ok {
				list[name] = q.DeepCopy()
			}
		}
	}
	for _, item := range items {
		setDefaults(r.Requests, item.DefaultRequest)
		setDefaults(r.Limits, item.Default)
	}
	for _, item := range items {
		for name, min := range item.Min {
			if req, ok := r.Requests[name]; !ok || req.Cmp(min) < 0 {
				r.Requests[name] = min.DeepCopy()
			}
			if lim, ok := r.Limits[name]; ok && lim.Cmp(min) < 0 {
				r.Limits[name] = min.DeepCopy()
			}
		}
		for name, max := range item.Max {
			if lim, ok := r.Limits[name]; !ok || lim.Cmp(max) > 0 {
				r.Limits[name] = max.DeepCopy()
			}
			if req, ok := r.Requests[name]; ok && req.Cmp(max) > 0 {
				r.Requests[name] = max.DeepCopy()
			}
		}
		for name, ratio := range item.MaxLimitRequestRatio {
			req, hasReq := r.Requests[name]
			lim, hasLim := r.Limits[name]
			switch {
			case hasReq && !hasLim:
				r.Limits[name] = req.DeepCopy()
			case hasLim && !hasReq:
				r.Requests[name] = lim.DeepCopy()
			case hasReq && hasLim && ratio.Sign() > 0:
				if least := divideUp(name, lim, ratio); req.Cmp(least) < 0 {
					r.Requests[name] = least
				}
			}
		}
	}
	// A request above its limit is invalid: the limit follows.
	for name, req := range r.Requests {
		if lim, ok := r.Limits[name]; ok && req.Cmp(lim) > 0 {
			r.Limits[name] = req.DeepCopy()
		}
	}
}

// divideUp is the least request whose ratio to lim is at most ratio: in
// millicores for CPU, whole units (bytes) for the rest.
func divideUp(name corev1.ResourceName, lim, ratio resource.Quantity) resource.Quantity {
	if lim.Value() > resource.MaxMilliValue/1000 || ratio.MilliValue() <= 0 {
		return *resource.NewQuantity((lim.Value()+ratio.Value()-1)/max(ratio.Value(), 1), lim.Format)
	}
	milli := (lim.MilliValue()*1000 + ratio.MilliValue() - 1) / ratio.MilliValue()
	if name == corev1.ResourceCPU {
		return *resource.NewMilliQuantity(milli, lim.Format)
	}
	return *resource.NewQuantity((milli+999)/1000, lim.Format)
}

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
