// The hosted page's niceties; the form works the same without them. The server puts the
// brand table in front of this file as `const BRANDS = [...]` (CardBrand.all, in its order).
// Nothing here sends card data anywhere: the form posts it, as it would without script.
"use strict";
(function () {
  const form = document.getElementById("pay-form");
  if (!form) return;
  const number = document.getElementById("number");
  const brandLabel = document.getElementById("brand");
  const expiry = document.getElementById("expiry");
  const cvc = document.getElementById("cvc");
  const cvcLabel = document.getElementById("cvc-label");
  const pay = document.getElementById("pay");

  // Whether a number's first digits fit an IIN range [low, high] as far as they go: the
  // brand rule of CardBrand.detectPartial, so that the page names the brand the vault will.
  function fits(range, digits) {
    const size = String(range[0]).length;
    if (digits.length >= size) {
      const value = Number(digits.slice(0, size));
      return value >= range[0] && value <= range[1];
    }
    const scale = 10 ** (size - digits.length);
    const value = Number(digits);
    return value >= Math.floor(range[0] / scale) && value <= Math.floor(range[1] / scale);
  }

  // The brands the digits can still be; one when the most specific range has settled it.
  function candidates(digits) {
    if (digits.length === 0) return [];
    const fitting = [];
    for (const brand of BRANDS) {
      const range = brand.ranges.find((r) => fits(r, digits));
      if (!range) continue;
      const size = String(range[0]).length;
      fitting.push({ brand: brand, strength: digits.length >= size ? size : null });
    }
    if (fitting.length > 0 && fitting.every((f) => f.strength !== null)) {
      const strongest = Math.max(...fitting.map((f) => f.strength));
      return [fitting.find((f) => f.strength === strongest).brand];
    }
    return fitting.map((f) => f.brand);
  }

  // Groups of digits as the brand prints them, for the shortest length that holds them.
  function grouped(digits, brand) {
    let groups = [4, 4, 4, 4, 4];
    if (brand) {
      const length = brand.lengths.find((l) => l >= digits.length) || brand.lengths[brand.lengths.length - 1];
      groups = brand.groups[String(length)] || groups;
    }
    const parts = [];
    let at = 0;
    for (const size of groups) {
      if (at >= digits.length) break;
      parts.push(digits.slice(at, at + size));
      at += size;
    }
    if (at < digits.length) parts.push(digits.slice(at));
    return parts.join(" ");
  }

  function showBrand() {
    const digits = number.value.replace(/\D/g, "");
    const found = candidates(digits);
    const brand = found.length === 1 ? found[0] : null;
    brandLabel.textContent = brand ? brand.name : "";
    const size = brand ? brand.cvcLength : 4;
    cvc.maxLength = size;
    cvc.placeholder = "\u2022".repeat(brand ? size : 3);
    cvcLabel.textContent = brand ? brand.cvcName + " (" + size + " digits)" : "Security code";
    return brand;
  }

  // A field's message from the last try goes once the field is changed.
  function clearError(input) {
    const field = input.closest(".field");
    if (!field || !field.classList.contains("invalid")) return;
    field.classList.remove("invalid");
    const message = field.querySelector(".error");
    if (message) message.remove();
    input.removeAttribute("aria-invalid");
    input.removeAttribute("aria-describedby");
  }
  for (const input of form.querySelectorAll("input:not([type=hidden]):not([type=file])")) {
    input.addEventListener("input", function () { clearError(input); });
  }

  number.addEventListener("input", function () {
    const atEnd = number.selectionStart === number.value.length;
    const digits = number.value.replace(/\D/g, "").slice(0, 19);
    const brand = showBrand();
    const longest = brand ? Math.max(...brand.lengths) : 19;
    if (atEnd) number.value = grouped(digits.slice(0, longest), brand);
  });

  expiry.addEventListener("input", function (event) {
    if (event.inputType && event.inputType.startsWith("delete")) return;
    let text = expiry.value;
    if (/^[2-9]$/.test(text)) text = "0" + text;
    if (/^\d{2}$/.test(text)) text = text + "/";
    expiry.value = text;
  });

  // A photo of the card: the server reads it and the fields are filled for the buyer to
  // check. The photo is sent with the form's token and kept nowhere.
  const photoRow = document.getElementById("photo-row");
  const photo = document.getElementById("photo");
  const photoStatus = document.getElementById("photo-status");
  if (photoRow && window.fetch) {
    photoRow.hidden = false;
    photo.addEventListener("change", async function () {
      const file = photo.files && photo.files[0];
      if (!file) return;
      photoStatus.textContent = "Reading the photo\u2026";
      try {
        const answer = await fetch(form.getAttribute("action") + "/scan", {
          method: "POST",
          credentials: "same-origin",
          // The server reads the format from the bytes; the type only says "an image".
          headers: {
            "Content-Type": file.type === "image/png" ? "image/png" : "image/jpeg",
            "X-Capture-Form-Token": form.elements["csrf"].value,
          },
          body: file,
        });
        const read = await answer.json();
        if (!answer.ok) {
          photoStatus.textContent = (read.error && read.error.message) || "The photo could not be read; type the card in.";
          return;
        }
        if (read.number) {
          number.value = read.number;
          clearError(number);
          showBrand();
        }
        if (read.expiry) {
          expiry.value = read.expiry;
          clearError(expiry);
        }
        const name = document.getElementById("name");
        if (read.name && !name.value) name.value = read.name;
        photoStatus.textContent = read.message;
        (read.number ? cvc : number).focus();
      } catch (error) {
        photoStatus.textContent = "The photo could not be sent; type the card in.";
      } finally {
        photo.value = "";
      }
    });
  }

  // The camera: a live view with the card's outline; a frame (JPEG, 1000 pixels wide) goes to
  // the server when the last one is answered, with the form's token. The server votes over
  // the frames and, once two agree, answers the brand, the last four digits and the expiry,
  // and a reference the form pays with: the number never comes to the page.
  const cameraRow = document.getElementById("camera-row");
  const media = navigator.mediaDevices;
  if (cameraRow && window.fetch && window.isSecureContext && media && media.getUserMedia) {
    const start = document.getElementById("camera-start");
    const view = document.getElementById("camera-view");
    const video = document.getElementById("camera-video");
    const status = document.getElementById("camera-status");
    const typeInstead = document.getElementById("camera-type");
    const scanned = document.getElementById("scanned");
    const scanInput = document.getElementById("scan");
    const numberField = document.getElementById("number-field");
    const canvas = document.createElement("canvas");
    let stream = null;
    let hint = null;
    // Set after 20 s without a card: from then on the page keeps saying so.
    let late = null;
    // The first frame after the camera starts tells the server to drop this browser's earlier
    // reading: a card shown now replaces the one read before.
    let fresh = false;
    // Offered only where the browser lists a camera: elsewhere the page stays as it was.
    if (media.enumerateDevices) {
      media.enumerateDevices().then(function (devices) {
        if (devices.some((device) => device.kind === "videoinput")) cameraRow.hidden = false;
      }, function () {});
    }

    function lateHint() {
      late = "No card has been read in 20 seconds. Hold it still and closer, or type it instead.";
      if (stream) status.textContent = late;
    }

    function stop() {
      if (stream) stream.getTracks().forEach((track) => track.stop());
      stream = null;
      clearTimeout(hint);
      view.hidden = true;
      typeInstead.hidden = true;
      start.hidden = false;
    }

    function typeCard() {
      stop();
      if (photoRow) photoRow.hidden = false;
      scanInput.value = "";
      scanned.hidden = true;
      numberField.hidden = false;
      number.required = true;
      status.textContent = "";
      number.focus();
    }

    function accepted(card, message) {
      stop();
      cameraRow.hidden = true;
      if (photoRow) photoRow.hidden = true;
      scanInput.value = card.scan;
      number.value = "";
      number.required = false;
      numberField.hidden = true;
      document.getElementById("scanned-card").textContent =
        card.brand_name + " " + card.masked + (card.expiry ? ", expires " + card.expiry : "") + " (read by the camera)";
      // What to check: an expiry already past is said now, not first at Pay.
      document.getElementById("scanned-note").textContent = message || "";
      scanned.hidden = false;
      if (card.expiry) {
        expiry.value = card.expiry;
        clearError(expiry);
      }
      cvc.maxLength = card.cvc_length;
      cvc.placeholder = "\u2022".repeat(card.cvc_length);
      cvcLabel.textContent = card.cvc_label;
      (card.expiry ? cvc : expiry).focus();
    }

    async function send() {
      if (!stream) return;
      if (video.readyState < 2 || video.videoWidth === 0) {
        setTimeout(send, 100);
        return;
      }
      const width = Math.min(1000, video.videoWidth);
      canvas.width = width;
      canvas.height = Math.round((video.videoHeight * width) / video.videoWidth);
      canvas.getContext("2d").drawImage(video, 0, 0, canvas.width, canvas.height);
      const frame = await new Promise((resolve) => canvas.toBlob(resolve, "image/jpeg", 0.85));
      if (!stream || !frame) return;
      let read = null;
      let answer = null;
      try {
        answer = await fetch(form.getAttribute("action") + "/frames", {
          method: "POST",
          credentials: "same-origin",
          headers: Object.assign(
            { "Content-Type": "image/jpeg", "X-Capture-Form-Token": form.elements["csrf"].value },
            fresh ? { "X-Capture-Camera-Start": "1" } : {}
          ),
          body: frame,
        });
        fresh = false;
        read = await answer.json();
      } catch (error) {
        read = null;
      }
      if (!stream) return;
      if (answer && answer.ok && read.status === "accepted") {
        accepted(read.card, read.message);
        return;
      }
      if (answer && answer.ok) {
        // A frame that read a number: the card is being read, so the 20 s without a card
        // start again (the page said "Got it, hold still" and then "No card has been read").
        if (read.number_read) {
          late = null;
          clearTimeout(hint);
          hint = setTimeout(lateHint, 20000);
        }
        status.textContent = late || read.message;
        setTimeout(send, 250);
      } else if (answer && answer.status === 429) {
        setTimeout(send, 1000);
      } else {
        stop();
        status.textContent = (read && read.error && read.error.message) || "The camera's frames could not be sent; type the card in.";
      }
    }

    start.addEventListener("click", async function () {
      status.textContent = "Starting the camera\u2026";
      try {
        stream = await media.getUserMedia({
          audio: false,
          video: { facingMode: { ideal: "environment" }, width: { ideal: 1920 }, height: { ideal: 1080 } },
        });
      } catch (error) {
        stream = null;
        status.textContent = "The camera is not available here; type the card in.";
        return;
      }
      video.srcObject = stream;
      await video.play().catch(() => {});
      view.hidden = false;
      typeInstead.hidden = false;
      start.hidden = true;
      status.textContent = "Hold the card inside the frame, flat and in good light.";
      late = null;
      fresh = true;
      hint = setTimeout(lateHint, 20000);
      send();
    });
    typeInstead.addEventListener("click", typeCard);
    document.getElementById("scanned-type").addEventListener("click", function () {
      cameraRow.hidden = false;
      typeCard();
    });
  }

  const payLabel = pay.textContent;
  form.addEventListener("submit", function () {
    pay.disabled = true;
    pay.textContent = "Paying\u2026";
  });
  // Back to this page from the browser's cache: the button works again.
  window.addEventListener("pageshow", function () {
    pay.disabled = false;
    pay.textContent = payLabel;
  });

  showBrand();
})();
